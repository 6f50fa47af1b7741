"""Does anything the writer was given mention the subject of a personal question?

What counts as memory here is what the writer's prompt holds about the user: their facts
(key and value: the profile's first name, city and activity are facts too), the user's own
messages of the recent window, and the memory section (recalled turns, summaries,
remembered facts). The assistant's earlier replies do not count: an answer it invented, or
an "I don't know", is no evidence.

The rule is by words: the subject's words (English and French together: "sister" is found in
"ma sœur Léa joue du violon") as whole folded words, or as the start of a longer one
("soeurs", "habitent"). A question about the user as a whole ("qui suis-je ?") is answered by
anything known of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from eko.chat.grounding.personal import PersonalQuestion, normalise, text_words
from eko.guard.utterance import fact_values

# Shorter words must match whole ("ne", "vol"); longer ones may start a longer word.
_MIN_PREFIX = 4


def memory_texts(
    *,
    facts: Iterable[tuple[str, Any]],
    user_turns: Sequence[str],
    recalled: Sequence[str],
) -> list[str]:
    """The texts that hold what is known of the user, each a separate piece of evidence."""
    texts = [f"{key.replace('_', ' ')} {' '.join(fact_values(value))}" for key, value in facts]
    return texts + [text for text in (*user_turns, *recalled) if text.strip()]


def remembered(question: PersonalQuestion, texts: Sequence[str]) -> bool:
    """True when one of `texts` mentions the question's subject."""
    if not question.evidence:
        return any(text.strip() for text in texts)
    for text in texts:
        for word in text_words(text):
            token = normalise(word)
            if token in question.evidence or any(
                len(evidence) >= _MIN_PREFIX and token.startswith(evidence)
                for evidence in question.evidence
            ):
                return True
    return False
