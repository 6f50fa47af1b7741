"""Small text helpers shared by the memory modules."""

from __future__ import annotations

import re

from eko.text import fold_plain

_SPACES = re.compile(r"\s+")


def normalize_key(text: str) -> str:
    """Casefolded, accent- and punctuation-free, single-spaced: "Corentin ?" == "corentin"."""
    return fold_plain(text)[:200]


def one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def clip(text: str, max_chars: int) -> str:
    """At most max_chars, cut on a word boundary when one is near, with an ellipsis."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return text[:max_chars]
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space > max_chars * 0.7:
        cut = cut[:space]
    return cut.rstrip() + "…"
