"""Which kind an attached file is (declared type, else its name), and reading its text."""

from __future__ import annotations

import pytest

from eko.chat.docs.attachments import clean_filename
from eko.chat.docs.extract import Unreadable, Unsupported, extract_text, kind_of
from tests.pdf_file import pdf_bytes


@pytest.mark.parametrize(
    ("name", "content_type", "kind"),
    [
        ("a.txt", "text/plain; charset=utf-8", "text"),
        ("a.md", "text/plain", "markdown"),
        ("a.MD", "", "markdown"),
        ("a.markdown", "application/octet-stream", "markdown"),
        ("notes", "text/markdown", "markdown"),
        ("a.pdf", None, "pdf"),
        ("scan", "APPLICATION/PDF", "pdf"),
    ],
)
def test_kind_of(name: str, content_type: str | None, kind: str) -> None:
    assert kind_of(name, content_type) == kind


@pytest.mark.parametrize(
    ("name", "content_type"),
    [("a.png", "image/png"), ("a.docx", ""), ("a.pdf", "image/png"), ("noname", None)],
)
def test_other_files_are_unsupported(name: str, content_type: str | None) -> None:
    with pytest.raises(Unsupported, match="attach a text"):
        kind_of(name, content_type)


def test_text_and_pdf_are_read_and_bad_ones_say_why() -> None:
    assert extract_text(b"\xef\xbb\xbfHello\r\nworld\x00", "text").text == "Hello\nworld"
    assert extract_text(b"# T\n\nx", "markdown").fmt == "markdown"
    read = extract_text(pdf_bytes("First (page).", "Second page."), "pdf")
    assert read.pages == 2 and read.text == "First (page).\n\nSecond page."
    with pytest.raises(Unreadable, match="not UTF-8"):
        extract_text("é".encode("latin-1"), "text")
    with pytest.raises(Unreadable, match=r"no text found in the PDF \(1 page\)"):
        extract_text(pdf_bytes(""), "pdf")
    with pytest.raises(Unreadable, match="the PDF cannot be read"):
        extract_text(pdf_bytes("Some text here.")[:120], "pdf")


def test_file_names_lose_their_directories_and_control_characters() -> None:
    assert clean_filename("C:\\Users\\me\\report.pdf") == "report.pdf"
    assert clean_filename("../../etc/passwd") == "passwd"
    assert clean_filename("a\x00b\n.txt") == "ab.txt"
    assert clean_filename("") == "attachment"
    long = clean_filename("x" * 300 + ".pdf")
    assert len(long) == 200 and long.endswith("x.pdf")
