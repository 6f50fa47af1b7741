"""OpenAICompatProvider against httpx.MockTransport: the wire request and the error mapping."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from eko.llm.errors import (
    InvalidOutput,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.types import ChatMessage, ProviderRequest

REQUEST = ProviderRequest(
    messages=(
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "Hello", name="Alice"),
        ChatMessage("assistant", "Hi Alice"),
        ChatMessage("user", "Bye"),
    ),
    max_tokens=32,
    temperature=0.2,
    stop=("\n\n",),
)
SCHEMA = {
    "title": "Reply Shape!",
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 20}},
    "required": ["answer"],
}


def ok_body(content: Any = "Goodbye!", finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "model": "gpt-test-2025",
        "choices": [
            {"message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": 21, "completion_tokens": 2},
    }


class Capture:
    """A MockTransport handler that records requests and answers with a fixed response."""

    def __init__(self, response: httpx.Response | Exception) -> None:
        self.response = response
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if isinstance(self.response, Exception):
            raise self.response
        return self.response

    @property
    def body(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[-1].content)
        return data


def provider(handler: Capture, **kwargs: Any) -> OpenAICompatProvider:
    options: dict[str, Any] = {"base_url": "https://gateway.test/v1", "model": "gpt-test"}
    options.update(kwargs)
    return OpenAICompatProvider(transport=httpx.MockTransport(handler), **options)


async def test_plain_request_shape_and_response() -> None:
    handler = Capture(httpx.Response(200, json=ok_body()))
    model = provider(handler, name="remote")

    response = await model.generate(REQUEST)

    sent = handler.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://gateway.test/v1/chat/completions"
    assert "authorization" not in sent.headers
    assert handler.body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Alice: Hello"},
            {"role": "assistant", "content": "Hi Alice"},
            {"role": "user", "content": "Bye"},
        ],
        "max_tokens": 32,
        "temperature": 0.2,
        "stop": ["\n\n"],
    }
    assert response.text == "Goodbye!"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (21, 2)
    assert response.model == "gpt-test-2025"
    assert response.truncated is False


async def test_bearer_key_and_extra_headers() -> None:
    handler = Capture(httpx.Response(200, json=ok_body()))
    model = provider(handler, api_key="sk-secret", headers={"X-Title": "Eko"})
    await model.generate(REQUEST)
    assert handler.requests[0].headers["authorization"] == "Bearer sk-secret"
    assert handler.requests[0].headers["x-title"] == "Eko"


async def test_base_url_with_trailing_slash() -> None:
    handler = Capture(httpx.Response(200, json=ok_body()))
    await provider(handler, base_url="http://localhost:11434/v1/").generate(REQUEST)
    assert str(handler.requests[0].url) == "http://localhost:11434/v1/chat/completions"


async def test_empty_stop_is_not_sent_and_long_stop_lists_are_cut() -> None:
    handler = Capture(httpx.Response(200, json=ok_body()))
    model = provider(handler)
    await model.generate(ProviderRequest(messages=REQUEST.messages))
    assert "stop" not in handler.body
    await model.generate(ProviderRequest(messages=REQUEST.messages, stop=tuple("abcdef")))
    assert handler.body["stop"] == ["a", "b", "c", "d"]


async def test_json_schema_response_format() -> None:
    handler = Capture(httpx.Response(200, json=ok_body('{"answer": "ok"}')))
    await provider(handler).generate(ProviderRequest(messages=REQUEST.messages, json_schema=SCHEMA))
    assert handler.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Reply_Shape", "schema": SCHEMA, "strict": False},
    }


async def test_json_object_mode_for_endpoints_without_json_schema() -> None:
    handler = Capture(httpx.Response(200, json=ok_body('{"answer": "ok"}')))
    model = provider(handler, structured_output="json_object")
    await model.generate(ProviderRequest(messages=REQUEST.messages, json_schema=SCHEMA))
    assert handler.body["response_format"] == {"type": "json_object", "schema": SCHEMA}


async def test_schema_without_title_gets_a_valid_name() -> None:
    handler = Capture(httpx.Response(200, json=ok_body("{}")))
    await provider(handler).generate(
        ProviderRequest(messages=REQUEST.messages, json_schema={"type": "object"})
    )
    assert handler.body["response_format"]["json_schema"]["name"] == "output"


async def test_length_finish_reason_means_truncated() -> None:
    handler = Capture(httpx.Response(200, json=ok_body("Good", finish_reason="length")))
    assert (await provider(handler).generate(REQUEST)).truncated is True


async def test_null_content_is_an_empty_answer() -> None:
    handler = Capture(httpx.Response(200, json=ok_body(None)))
    assert (await provider(handler).generate(REQUEST)).text == ""


async def test_missing_usage_and_model_are_tolerated() -> None:
    body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
    response = await provider(Capture(httpx.Response(200, json=body))).generate(REQUEST)
    assert (response.usage.input_tokens, response.usage.output_tokens) == (0, 0)
    assert response.model == "gpt-test"


async def test_connection_refused_on_a_real_closed_port(refused_url: str) -> None:
    model = OpenAICompatProvider(base_url=refused_url, model="m", name="remote", timeout_s=5)
    with pytest.raises(ProviderUnavailable) as caught:
        await model.generate(REQUEST)
    assert caught.value.provider == "remote"
    assert "ConnectError" in str(caught.value)
    await model.aclose()


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (httpx.ConnectError("refused"), ProviderUnavailable),
        (httpx.RemoteProtocolError("server disconnected"), ProviderUnavailable),
        (httpx.ConnectTimeout("connect timeout"), ProviderTimeout),
        (httpx.ReadTimeout("read timeout"), ProviderTimeout),
        (httpx.PoolTimeout("pool timeout"), ProviderTimeout),
    ],
)
async def test_transport_failures_are_mapped(
    failure: Exception, expected: type[ProviderError]
) -> None:
    with pytest.raises(expected):
        await provider(Capture(failure)).generate(REQUEST)


@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 503])
async def test_http_errors_carry_status_and_a_short_excerpt(status: int) -> None:
    body = '{"error": {"message": "' + "quota exceeded " * 50 + '"}}'
    handler = Capture(httpx.Response(status, text=body))
    with pytest.raises(ProviderHTTPError) as caught:
        await provider(handler).generate(REQUEST)
    assert caught.value.status_code == status
    assert "quota exceeded" in str(caught.value)
    assert len(str(caught.value)) < 260


@pytest.mark.parametrize(
    "body",
    [
        "<html>Bad gateway</html>",
        '{"choices": []}',
        '{"choices": [{"finish_reason": "stop"}]}',
        '{"choices": [{"message": {"content": ["a", "list"]}}]}',
        '{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}',
        "[]",
    ],
)
async def test_malformed_bodies_are_invalid_output(body: str) -> None:
    with pytest.raises(InvalidOutput):
        await provider(Capture(httpx.Response(200, text=body))).generate(REQUEST)


async def test_real_timeout_is_enforced() -> None:
    # MockTransport does not enforce httpx timeouts: a real server that never answers does.
    release = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    model = OpenAICompatProvider(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=0.3)
    try:
        with pytest.raises(ProviderTimeout):
            await asyncio.wait_for(model.generate(REQUEST), 5)
    finally:
        release.set()
        await model.aclose()
        server.close()
        await server.wait_closed()
