"""The fake upstream, driven by Eko's own OpenAI-compatible provider (in-process transport)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from eko.chat.engine.orchestrator_contract import output_model
from eko.llm.errors import ProviderTimeout
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.types import ChatMessage, ProviderRequest
from eko_bench.load.fake_upstream import REPLY_TEXT, UpstreamCounts, create_app

REQUEST = ProviderRequest(messages=(ChatMessage("user", "Bonjour"),), max_tokens=20)


def _provider(counts: UpstreamCounts, path: str = "/v1", **kwargs: object) -> OpenAICompatProvider:
    transport = httpx.ASGITransport(app=create_app(latency_s=0.0, counts=counts))
    return OpenAICompatProvider(
        base_url=f"http://upstream.test{path}",
        model="fake",
        transport=transport,
        **kwargs,  # type: ignore[arg-type]
    )


async def test_plain_request_gets_the_short_text_and_is_counted() -> None:
    counts = UpstreamCounts()
    provider = _provider(counts)
    try:
        response = await provider.generate(REQUEST)
    finally:
        await provider.aclose()
    assert response.text == REPLY_TEXT
    assert counts == UpstreamCounts(served=1, structured=0, hung=0)


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
async def test_structured_request_gets_json_valid_for_the_schema(mode: str) -> None:
    counts = UpstreamCounts()
    model = output_model(("billing",))
    provider = _provider(counts, structured_output=mode)
    request = ProviderRequest(
        messages=REQUEST.messages, max_tokens=20, json_schema=model.model_json_schema()
    )
    try:
        response = await provider.generate(request)
    finally:
        await provider.aclose()
    model.model_validate(json.loads(response.text))
    assert counts.structured == 1


async def test_hang_route_never_answers_so_the_caller_times_out() -> None:
    counts = UpstreamCounts()
    provider = _provider(counts, "/hang/v1", timeout_s=0.5)
    try:
        # The ASGI transport has no socket timeouts: the test bounds the wait itself.
        with pytest.raises((ProviderTimeout, TimeoutError)):
            await asyncio.wait_for(provider.generate(REQUEST), 0.5)
    finally:
        await provider.aclose()
    assert counts.hung == 1
    assert counts.served == 0


async def test_models_and_stats_routes() -> None:
    counts = UpstreamCounts(served=3)
    transport = httpx.ASGITransport(app=create_app(latency_s=0.0, counts=counts))
    async with httpx.AsyncClient(transport=transport, base_url="http://upstream.test") as http:
        models = (await http.get("/v1/models")).json()
        stats = (await http.get("/stats")).json()
    assert [m["id"] for m in models["data"]] == ["fake"]
    assert stats == {"served": 3, "structured": 0, "hung": 0}
