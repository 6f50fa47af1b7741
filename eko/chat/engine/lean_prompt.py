"""What the writer's compact prompt leaves out for a small model (issue 34, the lean path).

Measured with the bundled 1.5B model on `eko bench llm`'s 44 everyday questions (temperature
0): the one-line prompt of the bare model got 39 right; the writer's prompt of 2026-11-26
(persona, rules, the normal mode's five intent hints, an eight-line "This turn" block, a
profile saying "name: unknown", the reply-language note after the message) got 34; the
compact persona and rules alone, 39. Every line a 1.5B model reads is a line it may answer
instead of the question ("Good morning!" for "How do you say good morning in French?" with
"(Answer in English.)" after it). So the compact prompt keeps only the lines that say
something about this turn: the mode's hint for this intent, the turn inputs that are not
defaults, what is known of the user.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from eko.guard.language import detect_language

# The normal mode's hint lines: "- intent_a / intent_b: what to do".
_HINT = re.compile(r"^- (?P<intents>[a-z_ /]+):")
# A message that names the language of the answer it wants ("Traduis en anglais…", "How do
# you say … in Spanish?") is not to be told to answer in the language it is written in.
_LANGUAGES_FR = (
    "anglais|français|francais|espagnol|italien|allemand|portugais|néerlandais|chinois|japonais"
    "|arabe|russe|latin"
)
_LANGUAGES_EN = (
    "english|french|spanish|italian|german|portuguese|dutch|chinese|japanese|arabic|russian|latin"
)
_NAMES_A_LANGUAGE = re.compile(
    rf"\b(?:tradui\w*|translat\w*|en (?:{_LANGUAGES_FR})|in (?:{_LANGUAGES_EN}))\b",
    re.IGNORECASE,
)
# The profile lines that tell a model nothing: no name given, the plan (quota warnings have
# their own instructions).
_EMPTY_PROFILE_LINES = re.compile(r"^(?:name: unknown|plan: .*)$")


def names_a_language(text: str) -> bool:
    """Whether the message asks for an answer in a language it names (a translation)."""
    return bool(_NAMES_A_LANGUAGE.search(text))


def language_drifts(language: str, earlier: Sequence[str]) -> bool:
    """Whether an earlier message of the window is in another language than `language` (the
    message's): only then would a small model follow the history's language instead."""
    return any(detect_language(text) not in (language, "und") for text in earlier)


def mode_hint(mode_text: str, intent: str) -> str:
    """The normal mode's instructions cut to this intent's hint line ("" when none)."""
    for line in mode_text.splitlines():
        match = _HINT.match(line)
        if match and intent in (name.strip() for name in match["intents"].split("/")):
            return line[2:]
    return ""


def lean_profile(text: str) -> str:
    """The "About the user" section without the lines that say nothing ("" when none left)."""
    kept = [line for line in text.splitlines() if not _EMPTY_PROFILE_LINES.match(line)]
    return "\n".join(kept)
