"""OpenAICompatProvider: any endpoint speaking OpenAI's `/chat/completions`.

OpenAI, DeepSeek, Mistral, Groq, vLLM, Ollama and llama.cpp's server all accept this shape.
Transport and HTTP failures are mapped into the LLM error hierarchy so the runtime can fall
back; the transport is injectable so tests run against httpx.MockTransport.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, TypeAlias

import httpx

from eko.llm.errors import (
    InvalidOutput,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

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
    if request.json_schema is not None and structured_output == "json_object":
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
    )


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > ERROR_BODY_EXCERPT_CHARS:
        return flat[: ERROR_BODY_EXCERPT_CHARS - 1] + "…"
    return flat
