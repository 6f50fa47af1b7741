"""The answer-only lock on the writer's text (after the model): its flags out, a Sources block
the model wrote replaced by the canonical one (1-3 bullets, titles and domains, never URLs), and
the body capped so the whole answer stays under its limit."""

from __future__ import annotations

import re

from eko.chat.engine.flags import strip_flags
from eko.chat.text import cap_answer
from eko.chat.websearch.base import WebSearchResult

SOURCES_HEADER = "📌 Sources"
MAX_SOURCES = 3
# A "📌 Sources" block (or "Sources:" line) the model wrote itself, to the end of the text.
_MODEL_SOURCES = re.compile(
    r"(?:^|\n)[ \t]*"
    r"(?:📌[ \t]*\**sources?\**[ \t]*:?|\**sources?\**[ \t]*:|\**sources?\**[ \t]*(?=\n))"
    r"(?:.|\n)*$",
    re.IGNORECASE,
)
_URL = re.compile(r"https?://\S+")


def sources_block(result: WebSearchResult | None) -> str:
    """The canonical "📌 Sources" block: 1-3 bullets, title — domain, no URL."""
    if result is None:
        return ""
    bullets = []
    seen: set[str] = set()
    for source in result.sources:
        title = _URL.sub("", source.title).strip() or source.domain
        label = (
            f"{title[:90]} — {source.domain}"
            if source.domain and source.domain not in title
            else title[:90]
        )
        if label and label not in seen:
            seen.add(label)
            bullets.append(f"• {label}")
        if len(bullets) == MAX_SOURCES:
            break
    return f"{SOURCES_HEADER}\n" + "\n".join(bullets) if bullets else ""


def compose_answer(
    raw: str, *, web: WebSearchResult | None, max_chars: int
) -> tuple[str, dict[str, bool]]:
    """The answer-only lock on a model text: flags out, canonical sources, capped length."""
    text, flags = strip_flags(raw)
    block = sources_block(web)
    if block:
        text = _MODEL_SOURCES.sub("", text).rstrip()
        text = _URL.sub("", text).strip()
        body = cap_answer(text, max(1, max_chars - len(block) - 2)) if text else ""
        return (f"{body}\n\n{block}" if body else ""), flags
    return cap_answer(text, max_chars), flags
