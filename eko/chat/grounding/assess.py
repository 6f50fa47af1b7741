"""The grounding of one turn: is the message a personal question, and does what the writer
was given mention its subject? The writer hands in what its prompt holds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from eko.chat.grounding.memory import memory_texts, remembered
from eko.chat.grounding.personal import personal_question
from eko.chat.grounding.report import GroundingReport

# The memory node's sources (eko/chat/memory_context.py): its section is recalled memory.
# The user's profile section ("About the user") is not read as text: its facts are handed in
# apart, and its "name: unknown" lines would count as mentions.
MEMORY_SOURCES = frozenset({"memory_facts", "history_summaries"})


def assess(
    message: str,
    *,
    facts: Iterable[tuple[str, Any]],
    user_turns: Sequence[str],
    recalled: Sequence[str],
) -> GroundingReport | None:
    """None when the message is not a personal question. `user_turns`: the user's earlier
    messages in the prompt; `recalled`: the memory section's text."""
    question = personal_question(message)
    if question is None:
        return None
    texts = memory_texts(facts=facts, user_turns=user_turns, recalled=recalled)
    known = remembered(question, texts)
    # Every key given, so the stored metadata always has the report's whole shape (ReplyMeta
    # stores only the keys that were set).
    return GroundingReport(
        subject=question.subject,
        remembered=known,
        note=not known,
        checked=False,
        flagged=False,
        corrected=False,
        original=None,
    )
