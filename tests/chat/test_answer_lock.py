"""The answer-only lock on the writer's text: flags out, canonical sources, bounded length."""

from __future__ import annotations

from eko.chat.engine.answer_lock import SOURCES_HEADER, compose_answer
from eko.chat.websearch import WebSearchResult, WebSource

WEB = WebSearchResult(
    provider="t",
    query="q",
    sources=tuple(WebSource(f"Title {i}", f"https://www.site{i}.com/page?x={i}") for i in range(5)),
)


def test_sources_block_replaces_the_models_and_has_no_url() -> None:
    raw = (
        "Il fera beau demain, voir https://evil.example/x.\n\n📌 Sources\n- https://a.b/c\n"
        "aha_moment=true"
    )
    text, flags = compose_answer(raw, web=WEB, max_chars=4000)
    assert flags == {"aha_moment": True}
    assert "http" not in text and "aha_moment" not in text
    assert text.count(SOURCES_HEADER) == 1
    block = text.split(SOURCES_HEADER, 1)[1].strip().splitlines()
    assert block == ["• Title 0 — site0.com", "• Title 1 — site1.com", "• Title 2 — site2.com"]


def test_cap_keeps_the_sources_block_whole() -> None:
    text, _ = compose_answer("mot " * 3000, web=WEB, max_chars=500)
    assert len(text) <= 500
    assert text.endswith("• Title 2 — site2.com")
    assert "…" in text


def test_without_web_the_answer_is_only_capped() -> None:
    text, flags = compose_answer("x" * 5000, web=None, max_chars=4000)
    assert len(text) == 4000 and text.endswith("…") and flags == {}


def test_a_flag_only_answer_is_empty() -> None:
    assert compose_answer("onboarding_abort=true", web=None, max_chars=4000) == (
        "",
        {"onboarding_abort": True},
    )
