"""The text of an attached file: plain text, Markdown, or a PDF's text layer (pypdf).

`kind_of(filename, content_type)` says which of the three a file is (by its declared type; by
its name's suffix when the type says nothing, as browsers do for .md); `extract_text` reads it.
What cannot be read raises `Unreadable` with a message for the person who sent it.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from pypdf import PdfReader

Kind = Literal["text", "markdown", "pdf"]

CONTENT_TYPES: dict[str, Kind] = {
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "application/pdf": "pdf",
}
SUFFIXES: dict[str, Kind] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
}
# The type each kind is recorded under.
TYPE_OF: dict[Kind, str] = {
    "text": "text/plain",
    "markdown": "text/markdown",
    "pdf": "application/pdf",
}
# Types that say nothing about the content: the file name decides.
_UNDECLARED = {"", "application/octet-stream", "binary/octet-stream"}


class Unsupported(ValueError):
    """Not a text, Markdown or PDF file."""


class Unreadable(ValueError):
    """A file of a supported kind whose text cannot be read (corrupt, encrypted, no text)."""


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    # The chunker's format: "markdown" keeps headings as chunk titles.
    fmt: Literal["markdown", "text"]
    pages: int | None = None


def kind_of(filename: str, content_type: str | None) -> Kind:
    declared = (content_type or "").split(";")[0].strip().lower()
    suffix = SUFFIXES.get(PurePosixPath(filename).suffix.lower())
    kind = CONTENT_TYPES.get(declared)
    if kind == "text" and suffix == "markdown":
        return "markdown"  # many clients send .md files as text/plain
    if kind is not None:
        return kind
    if declared in _UNDECLARED and suffix is not None:
        return suffix
    raise Unsupported(
        f"{filename!r} ({declared or 'no type'}): attach a text (.txt), Markdown (.md) or PDF file"
    )


def extract_text(data: bytes, kind: Kind) -> Extracted:
    if kind == "pdf":
        return _pdf_text(data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"the file is not UTF-8 text (byte {exc.start})") from exc
    text = _clean(text)
    if not text.strip():
        raise Unreadable("the file has no text")
    return Extracted(text, "markdown" if kind == "markdown" else "text")


def _pdf_text(data: bytes) -> Extracted:
    if not data.lstrip()[:5] == b"%PDF-":
        raise Unreadable("the file is not a PDF (it does not start with %PDF-)")
    # pypdf logs every repair it makes on a damaged file: the outcome is reported instead.
    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("the PDF is encrypted with a password")
        pages = [page.extract_text() or "" for page in reader.pages]
    except Unreadable:
        raise
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        raise Unreadable(f"the PDF cannot be read ({type(exc).__name__}: {exc})"[:300]) from exc
    finally:
        pypdf_log.setLevel(level)
    text = _clean("\n\n".join(page.strip() for page in pages if page.strip()))
    if not text.strip():
        raise Unreadable(
            f"no text found in the PDF ({len(pages)} page{'s' if len(pages) != 1 else ''}):"
            " a scanned document needs OCR first"
        )
    return Extracted(text, "text", pages=len(pages))


def _clean(text: str) -> str:
    # NUL cannot be stored in a PostgreSQL text column; CRLF becomes LF.
    return text.replace("\x00", "").replace("\r\n", "\n")
