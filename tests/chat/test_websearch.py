"""Both web search adapters against httpx.MockTransport."""

from __future__ import annotations

import json

import httpx
import pytest

from eko.chat.websearch import (
    PerplexitySearch,
    SearxngSearch,
    WebSearchError,
    build_web_search,
)
from eko.config import Settings


def _searx(request: httpx.Request) -> httpx.Response:
    assert request.url.path == "/search"
    assert request.url.params["format"] == "json"
    assert request.url.params["q"] == "météo lyon"
    return httpx.Response(
        200,
        json={
            "results": [
                {
                    "title": "Météo Lyon",
                    "url": "https://www.meteo.fr/lyon",
                    "content": "Soleil, 24°C",
                },
                {"title": "Lyon weather", "url": "https://weather.com/lyon", "content": "Sunny"},
                {"no_url": True},
                {"title": "Third", "url": "https://third.example/x"},
            ]
        },
    )


async def test_searxng_adapter() -> None:
    provider = SearxngSearch(base_url="http://searx.test/", transport=httpx.MockTransport(_searx))
    result = await provider.search("météo lyon", max_results=2)
    await provider.aclose()
    assert [(s.title, s.domain) for s in result.sources] == [
        ("Météo Lyon", "meteo.fr"),
        ("Lyon weather", "weather.com"),
    ]
    assert result.sources[0].snippet == "Soleil, 24°C"
    assert result.answer is None


async def test_perplexity_adapter_reads_citations() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/chat/completions"
        assert request.headers["authorization"] == "Bearer pk"
        body = json.loads(request.content)
        assert body["model"] == "sonar-pro" and body["messages"][-1]["content"] == "prix du pain"
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"content": "Une baguette coûte environ 1,10 €."}}],
                "search_results": [
                    {"title": "Prix baguette 2026", "url": "https://www.insee.fr/a"}
                ],
                "citations": ["https://www.insee.fr/a", "https://lemonde.fr/b"],
            },
        )

    provider = PerplexitySearch(
        base_url="http://pplx.test", api_key="pk", transport=httpx.MockTransport(handler)
    )
    result = await provider.search("prix du pain", max_results=5)
    await provider.aclose()
    assert result.answer == "Une baguette coûte environ 1,10 €."
    assert [(s.title, s.domain) for s in result.sources] == [
        ("Prix baguette 2026", "insee.fr"),
        ("lemonde.fr", "lemonde.fr"),
    ]


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(500, text="boom"),
        httpx.Response(200, text="<html>"),
        httpx.Response(200, json={"unexpected": 1}),
    ],
)
async def test_bad_answers_raise_web_search_error(response: httpx.Response) -> None:
    for provider in (
        SearxngSearch(base_url="http://s.test", transport=httpx.MockTransport(lambda r: response)),
        PerplexitySearch(
            base_url="http://p.test",
            api_key=None,
            transport=httpx.MockTransport(lambda r: response),
        ),
    ):
        with pytest.raises(WebSearchError):
            await provider.search("q", max_results=3)
        await provider.aclose()


async def test_transport_failure_is_a_web_search_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    provider = SearxngSearch(base_url="http://s.test", transport=httpx.MockTransport(refuse))
    with pytest.raises(WebSearchError, match="ConnectError"):
        await provider.search("q", max_results=3)
    await provider.aclose()


def test_web_search_is_off_by_default() -> None:
    assert build_web_search(Settings(_env_file=None)) is None
    with pytest.raises(ValueError, match="EKO_WEB_SEARCH_URL"):
        build_web_search(Settings(_env_file=None, web_search_provider="searxng"))
