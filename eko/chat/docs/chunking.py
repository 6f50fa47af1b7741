"""Splitting Markdown or plain text into chunks for retrieval.

Markdown is cut at headings first (each chunk knows its heading path, "Guide > Install"), then
sections are packed paragraph by paragraph up to `max_chars`; a paragraph too long on its own is
cut at sentence ends, then at spaces. Consecutive chunks of one section share `overlap`
characters, so a sentence that straddles a cut is still found whole in one of them. Fenced code
blocks are kept in one piece where they fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


@dataclass(frozen=True, slots=True)
class Chunk:
    position: int
    title: str
    content: str

    @property
    def embedding_text(self) -> str:
        """What is embedded: the heading path gives a short chunk its topic."""
        return f"{self.title}\n\n{self.content}" if self.title else self.content


def chunk_text(
    text: str, *, fmt: str = "markdown", max_chars: int = 1000, overlap: int = 150
) -> list[Chunk]:
    if max_chars < 50:
        raise ValueError("max_chars must be at least 50")
    overlap = max(0, min(overlap, max_chars // 3))
    sections = _markdown_sections(text) if fmt == "markdown" else [("", text)]
    chunks: list[Chunk] = []
    for title, body in sections:
        for content in _pack(_paragraphs(body), max_chars, overlap):
            chunks.append(Chunk(len(chunks), title[:300], content))
    return chunks


def _markdown_sections(text: str) -> list[tuple[str, str]]:
    path: list[tuple[int, str]] = []
    sections: list[tuple[str, str]] = []
    lines: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            sections.append((" > ".join(name for _, name in path), body))
        lines.clear()

    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading is None:
            lines.append(line)
            continue
        flush()
        level, name = len(heading.group(1)), heading.group(2).strip()
        path = [(lvl, title) for lvl, title in path if lvl < level] + [(level, name)]
    flush()
    return sections


def _paragraphs(body: str) -> list[str]:
    """Blank-line separated paragraphs; a fenced block stays one paragraph."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    for line in body.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                paragraphs.append("\n".join(current).strip())
                current = []
            continue
        current.append(line)
    if current:
        paragraphs.append("\n".join(current).strip())
    return [p for p in paragraphs if p]


def _pieces(paragraph: str, max_chars: int) -> list[str]:
    """A paragraph cut to fit max_chars: at sentence ends, else at spaces, else anywhere."""
    if len(paragraph) <= max_chars:
        return [paragraph]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars)
            cut = cut if cut > max_chars // 2 else max_chars
            head, sentence = sentence[:cut].rstrip(), sentence[cut:].lstrip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if current and len(current) + 1 + len(sentence) > max_chars:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return pieces


def _pack(paragraphs: list[str], max_chars: int, overlap: int) -> list[str]:
    chunks: list[str] = []
    current = ""
    for paragraph in paragraphs:
        # Pieces leave room for the overlap carried in front of them.
        for piece in _pieces(paragraph, max(50, max_chars - overlap - 2)):
            if current and len(current) + 2 + len(piece) > max_chars:
                chunks.append(current)
                current = _tail(current, overlap)
                if current and len(current) + 2 + len(piece) > max_chars:
                    current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current and (not chunks or current != _tail(chunks[-1], overlap)):
        chunks.append(current)
    return chunks


def _tail(text: str, overlap: int) -> str:
    """The last `overlap` characters, starting at a word boundary."""
    if overlap <= 0 or len(text) <= overlap:
        return "" if overlap <= 0 else text
    tail = text[-overlap:]
    space = tail.find(" ")
    return tail[space + 1 :] if 0 <= space < len(tail) - 1 else tail
