"""OpenAICompatProvider: any endpoint speaking OpenAI's `/chat/completions`.

OpenAI, DeepSeek, Mistral, Groq, vLLM, Ollama and llama.cpp's server all accept this shape.
Transport and HTTP failures are mapped into the LLM error hierarchy so the runtime can fall
back; the transport is injectable so tests run against httpx.MockTransport.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator
from typing import Any, Literal, TypeAlias

import httpx

from eko.llm.errors import (
    InvalidOutput,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, StreamItem, Usage

StructuredOutputMode: TypeAlias = Literal["json_schema", "json_object"]

# OpenAI rejects more than 4 stop sequences; other gateways follow it.
MAX_STOP_SEQUENCES = 4
# How much of an error body goes into the exception (and so into logs and llm_calls).
ERROR_BODY_EXCERPT_CHARS = 200
# OpenAI's constraint on response_format.json_schema.name.
_SCHEMA_NAME_FORBIDDEN = re.compile(r"[^a-zA-Z0-9_-]+")


class OpenAICompatProvider:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        name: str = "openai",
        api_key: str | None = None,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 3.0,
        headers: dict[str, str] | None = None,
        structured_output: StructuredOutputMode = "json_schema",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.structured_output = structured_output
        request_headers = {"Accept": "application/json", **(headers or {})}
        if api_key:
            request_headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers=request_headers,
            # A host that is down fails within the connect budget; a slow answer gets the
            # read budget.
            timeout=httpx.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s)),
            transport=transport,
        )

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        payload = build_payload(self.model, request, structured_output=self.structured_output)
        try:
            response = await self._client.post("chat/completions", json=payload)
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(self.name, f"{type(exc).__name__}: no answer in time") from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(self.name, f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise ProviderHTTPError(self.name, response.status_code, _excerpt(response.text))
        return parse_response(self.name, self.model, response)

    async def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        """The upstream's Server-Sent Events stream: content deltas, then the whole response."""
        payload = build_payload(self.model, request, structured_output=self.structured_output)
        payload["stream"] = True
        # Usage arrives in a last chunk when asked for (OpenAI, vLLM, llama.cpp's server).
        payload["stream_options"] = {"include_usage": True}
        parts: list[str] = []
        state: dict[str, Any] = {}
        try:
            async with self._client.stream(
                "POST", "chat/completions", json=payload, headers={"Accept": "text/event-stream"}
            ) as response:
                if response.status_code >= 400:
                    body = (await response.aread()).decode("utf-8", errors="replace")
                    raise ProviderHTTPError(self.name, response.status_code, _excerpt(body))
                async for line in response.aiter_lines():
                    delta = _stream_line(self.name, line, state)
                    if delta:
                        parts.append(delta)
                        yield delta
                    if state.get("done"):
                        break
        except httpx.TimeoutException as exc:
            raise ProviderTimeout(self.name, f"{type(exc).__name__}: no answer in time") from exc
        except httpx.TransportError as exc:
            raise ProviderUnavailable(self.name, f"{type(exc).__name__}: {exc}") from exc
        if not state.get("seen"):
            raise InvalidOutput(self.name, "the stream ended without any completion chunk")
        answered = state.get("model")
        yield ProviderResponse(
            text="".join(parts).strip(),
            usage=Usage(
                input_tokens=int(state.get("prompt_tokens") or 0),
                # A server that sends no usage chunk streams about one token per chunk.
                output_tokens=int(state.get("completion_tokens") or len(parts)),
            ),
            model=answered if isinstance(answered, str) and answered else self.model,
            truncated=state.get("finish_reason") == "length",
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def build_payload(
    model: str, request: ProviderRequest, *, structured_output: StructuredOutputMode = "json_schema"
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "model": model,
        "messages": [_wire_message(message) for message in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    stop = [marker for marker in request.stop if marker][:MAX_STOP_SEQUENCES]
    if stop:
        # Some servers reject an empty list, so the key is only sent when it has content.
        payload["stop"] = stop
    if request.tools:
        payload["tools"] = list(request.tools)  # native tool calling (eko/chain/native_tools.py)
    caller = request.caller_format
    if caller is not None:
        # An API caller's format, passed through as it came (eko/llm/caller_format.py).
        if caller.response_format is not None:
            payload["response_format"] = caller.response_format
        if caller.tools:
            payload["tools"] = list(caller.tools)
            if caller.tool_choice is not None:
                payload["tool_choice"] = caller.tool_choice
    elif request.json_schema is not None and structured_output == "json_object":
        # llama-cpp-python's server turns this schema into a grammar; plain JSON modes ignore it.
        payload["response_format"] = {"type": "json_object", "schema": request.json_schema}
    elif request.json_schema is not None:
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": _schema_name(request.json_schema),
                "schema": request.json_schema,
                # strict mode rejects common pydantic schemas (defaults, optional fields);
                # the runtime validates the answer anyway.
                "strict": False,
            },
        }
    return payload


def _wire_message(message: ChatMessage) -> dict[str, str]:
    content = message.content
    # The `name` field is rejected by some gateways and restricted to [A-Za-z0-9_-] by OpenAI,
    # so a user's display name travels in the text, where every model sees it.
    if message.role == "user" and message.name:
        content = f"{message.name}: {content}"
    return {"role": message.role, "content": content}


def _schema_name(schema: dict[str, Any]) -> str:
    title = schema.get("title")
    name = _SCHEMA_NAME_FORBIDDEN.sub("_", title).strip("_")[:64] if isinstance(title, str) else ""
    return name or "output"


def parse_response(provider: str, model: str, response: httpx.Response) -> ProviderResponse:
    try:
        body = response.json()
        choice = body["choices"][0]
        content = choice["message"].get("content")
        finish_reason = choice.get("finish_reason")
        usage = body.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or 0)
        answered_model = body.get("model")
    except (
        json.JSONDecodeError,
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
        ValueError,
    ) as exc:
        raise InvalidOutput(
            provider, f"malformed completion body ({type(exc).__name__}): {_excerpt(response.text)}"
        ) from exc
    if content is not None and not isinstance(content, str):
        raise InvalidOutput(provider, f"message content is {type(content).__name__}, not text")
    return ProviderResponse(
        text=content or "",
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        model=answered_model if isinstance(answered_model, str) and answered_model else model,
        truncated=finish_reason == "length",
        tool_calls=tuple(_tool_calls(choice)),
    )


def _tool_calls(choice: dict[str, Any]) -> list[dict[str, Any]]:
    calls = choice["message"].get("tool_calls")
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > ERROR_BODY_EXCERPT_CHARS:
        return flat[: ERROR_BODY_EXCERPT_CHARS - 1] + "…"
    return flat


def _stream_line(provider: str, line: str, state: dict[str, Any]) -> str:
    """One SSE line of a streamed completion: its content delta ("" for anything else).

    `state` collects what the chunks say besides text (model, finish reason, usage) and
    `done` once the `[DONE]` sentinel arrives.
    """
    if not line.startswith("data:"):
        return ""  # comments (": ping"), event names, blank separators
    data = line[5:].strip()
    if data == "[DONE]":
        state["done"] = True
        return ""
    try:
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            raise TypeError("chunk is not an object")
        if "error" in chunk:
            raise InvalidOutput(provider, f"error in the stream: {_excerpt(json.dumps(chunk))}")
        state["seen"] = True
        if isinstance(chunk.get("model"), str):
            state["model"] = chunk["model"]
        usage = chunk.get("usage") or {}
        for key in ("prompt_tokens", "completion_tokens"):
            if usage.get(key) is not None:
                state[key] = int(usage[key])
        choices = chunk.get("choices") or []
        if not choices:
            return ""  # the usage-only last chunk
        choice = choices[0]
        if choice.get("finish_reason"):
            state["finish_reason"] = choice["finish_reason"]
        content = (choice.get("delta") or {}).get("content")
    except (json.JSONDecodeError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidOutput(
            provider, f"malformed stream chunk ({type(exc).__name__}): {_excerpt(data)}"
        ) from exc
    return content if isinstance(content, str) else ""
