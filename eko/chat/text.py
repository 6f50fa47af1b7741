"""Bounding and cleaning generated text before it is stored."""

from __future__ import annotations

MAX_ANSWER_CHARS = 4000
ELLIPSIS = "…"


def cap_answer(text: str, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """Anti-wall-of-text: cut at max_chars (on a word boundary when one is near) + ellipsis."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space > max_chars * 0.8:
        cut = cut[:space]
    return cut.rstrip() + ELLIPSIS
