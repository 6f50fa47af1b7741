"""Internal flags the response writer may emit (seed: Discovery "AHA moment").

`aha_moment=true` and `onboarding_abort=true` are signals for the backend, never text for the
user: they are stripped from the answer before it is stored and kept in metadata only. The
model may write them anywhere (usually at the end), in any case, with odd spacing, quoted or
bracketed, or cut in half by the token budget; all of that goes.
"""

from __future__ import annotations

import re

FLAG_NAMES = ("aha_moment", "onboarding_abort")

_NAME = r"(?P<name>aha[ _-]?moment|onboarding[ _-]?abort)"
_VALUE = r"(?P<value>true|false|yes|no|oui|non|1|0)"
# "aha_moment=true", "AHA_MOMENT : TRUE", "[aha_moment = true]", "`onboarding_abort=true`",
# "<aha_moment=true>", "{aha_moment: true}", "aha_moment=\"true\"".
_ASSIGNMENT = re.compile(
    rf"""[\[\(\{{<`*"']*[ \t]*{_NAME}[ \t]*["']?[ \t]*[:=]+[ \t]*["']?[ \t]*{_VALUE}\b"""
    rf"""[ \t]*["']?[ \t]*[\]\)\}}>`*]*""",
    re.IGNORECASE,
)
# A bare flag name with its underscore (never natural prose), e.g. "[aha_moment]".
_BARE = re.compile(r"[\[\(\{<`*]*\b(?:aha_moment|onboarding_abort)\b[\]\)\}>`*]*", re.IGNORECASE)
# A flag cut by max_tokens at the very end: "aha_mom", "onboarding_abort=tr".
_TRUNCATED_TAIL = re.compile(
    r"[\[\(\{<`*]*\b(?:aha_\w*|onboarding_\w*)[ \t]*(?:[:=]+[ \t]*\w*)?\s*$", re.IGNORECASE
)
_MARK = "\x00"
# Where a flag was: the mark and the blanks around it; a separator left dangling before a
# punctuation mark or the end of the text goes too ("Voilà, aha_moment=true." -> "Voilà.").
_MARK_BEFORE_PUNCT = re.compile(r"[ \t]*[,;]?[ \t]*(?:\x00[ \t]*)+(?=[,.;:!?])")
_MARK_AT_END = re.compile(r"[ \t,;|/·•—–-]*(?:\x00[\s,;|/·•—–-]*)+$")
_MARK_LINE_START = re.compile(r"^[ \t]*(?:\x00[ \t]*)+", re.MULTILINE)
_MARK_INLINE = re.compile(r"[ \t]*(?:\x00[ \t]*)+")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TRUE = {"true", "yes", "oui", "1"}


def _canonical(name: str) -> str:
    return "aha_moment" if name.lower().startswith("aha") else "onboarding_abort"


def strip_flags(text: str) -> tuple[str, dict[str, bool]]:
    """(text without any flag, {flag: value}) — a flag set twice keeps its last value."""
    flags: dict[str, bool] = {}

    def take(match: re.Match[str]) -> str:
        flags[_canonical(match.group("name"))] = match.group("value").lower() in _TRUE
        return _MARK

    cleaned = _ASSIGNMENT.sub(take, text.replace(_MARK, ""))
    cleaned = _TRUNCATED_TAIL.sub(_MARK, cleaned)
    cleaned = _BARE.sub(_MARK, cleaned)
    if _MARK not in cleaned:
        return text.strip(), flags
    cleaned = _MARK_BEFORE_PUNCT.sub("", cleaned)
    cleaned = _MARK_AT_END.sub("", cleaned)
    # A line that held only a flag empties; elsewhere a flag leaves one space.
    cleaned = _MARK_LINE_START.sub("", cleaned)
    cleaned = "\n".join(_MARK_INLINE.sub(" ", line).rstrip() for line in cleaned.split("\n"))
    cleaned = _BLANK_LINES.sub("\n\n", cleaned)
    return cleaned.strip(), flags


def contains_flag_text(text: str) -> bool:
    """True when any flag-looking text is left (used by tests and as a last check)."""
    lowered = text.lower()
    return any(name in lowered for name in FLAG_NAMES) or bool(
        re.search(r"aha[ _-]?moment\s*[:=]|onboarding[ _-]?abort\s*[:=]", lowered)
    )
