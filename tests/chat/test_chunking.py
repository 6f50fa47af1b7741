"""Markdown and text chunking for docs scopes."""

from __future__ import annotations

from eko.chat.docs.chunking import chunk_text

GUIDE = """# Guide

Intro paragraph.

## Install

Run the installer. Then restart.

```
code block

with a blank line
```

## Billing

### Refunds

Refunds take 5 days.
"""


def test_markdown_chunks_carry_their_heading_path() -> None:
    chunks = chunk_text(GUIDE, max_chars=1000)
    assert [c.title for c in chunks] == ["Guide", "Guide > Install", "Guide > Billing > Refunds"]
    assert "with a blank line" in chunks[1].content  # the fence stayed whole
    assert chunks[2].embedding_text.startswith("Guide > Billing > Refunds\n\n")
    assert [c.position for c in chunks] == [0, 1, 2]


def test_long_sections_are_packed_under_the_limit_with_overlap() -> None:
    sentences = " ".join(f"Sentence number {i} says something useful." for i in range(200))
    chunks = chunk_text(sentences, fmt="text", max_chars=500, overlap=100)
    assert len(chunks) > 5
    assert all(len(c.content) <= 500 for c in chunks)
    # Consecutive chunks share text (the overlap), and nothing is lost.
    assert chunks[1].content[:40] in chunks[0].content
    joined = " ".join(c.content for c in chunks)
    assert "Sentence number 0 " in joined and "Sentence number 199 " in joined


def test_plain_text_ignores_markdown_headings() -> None:
    chunks = chunk_text("# not a heading\n\nbody", fmt="text")
    assert len(chunks) == 1 and chunks[0].title == "" and chunks[0].content.startswith("# not")


def test_empty_text_has_no_chunk() -> None:
    assert chunk_text("  \n\n ") == []
