"""Shapes of Eko's OpenAI-compatible API (/v1/models, /v1/chat/completions).

Requests are read leniently where OpenAI's are (content as a string or a list of text parts)
and strictly where Eko cannot honour a parameter: those are refused with a 400 naming them.
Sampling parameters are accepted but not applied (Eko answers with its configured model
settings); the response names them in the `X-Eko-Ignored-Params` header.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText

# Refused: Eko cannot do what they ask.
UNSUPPORTED = (
    "functions",
    "function_call",
    "parallel_tool_calls",
    "logprobs",
    "top_logprobs",
    "logit_bias",
    "audio",
    "modalities",
    "prediction",
    "web_search_options",
    "reasoning_effort",
)
# Accepted, not applied: Eko's own generation settings win.
IGNORED = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "seed",
    "stop",
    "store",
    "service_tier",
    # Eko asks for one call at a time of a local model; a remote one decides for itself.
    "parallel_tool_calls",
)


class OpenAIError(Exception):
    """An error answered in OpenAI's shape: {"error": {message, type, param, code}}."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"message": message, "type": type, "param": param, "code": code}}
        self.headers = headers


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: InputText | None = None


class InputMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    # Checked like every other route's text: NUL and lone surrogates cannot be stored.
    content: InputText | list[ContentPart] | None = None
    name: InputText | None = None
    # An assistant message's tool calls; a tool message's answer to one of them.
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: InputText | None = Field(default=None, max_length=200)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class CompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: InputText
    messages: list[InputMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    # The caller's end user (OpenAI's semantics): recorded with the message, never a room.
    user: InputText | None = Field(default=None, max_length=200)
    # `eko_room`: the room to talk in (as the X-Eko-Room header); other keys are not read.
    metadata: dict[str, InputText] | None = None
    n: int | None = None
    # JSON, tools: read into a CallerFormat (eko/api/openai_format.py).
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None


def message_text(message: InputMessage, index: int) -> str:
    """The text of a message; non-text parts (images, audio, files) are refused."""
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    texts = []
    for part in message.content:
        if part.type != "text" or part.text is None:
            raise OpenAIError(
                400,
                f"messages[{index}] has a {part.type!r} part; Eko reads text only.",
                param=f"messages[{index}].content",
                code="unsupported_content",
            )
        texts.append(part.text)
    return "\n".join(texts)


def refused_and_ignored(request: CompletionRequest) -> list[str]:
    """Raises for a parameter Eko cannot honour; returns those it accepts without applying."""
    extra = request.model_extra or {}
    for name in UNSUPPORTED:
        if extra.get(name) not in (None, False, [], {}):
            raise OpenAIError(
                400,
                f"Eko does not support {name!r} on /v1/chat/completions.",
                param=name,
                code="unsupported_parameter",
            )
    if request.n is not None and request.n != 1:
        raise OpenAIError(400, "Eko writes one reply per message: n must be 1.", param="n")
    unknown = sorted(set(extra) - set(UNSUPPORTED) - set(IGNORED))
    if unknown:
        raise OpenAIError(
            400,
            f"Unknown parameter {unknown[0]!r} for /v1/chat/completions.",
            param=unknown[0],
            code="unknown_parameter",
        )
    return sorted(name for name in IGNORED if extra.get(name) is not None)


def model_entry(persona: str, created: int) -> dict[str, Any]:
    return {"id": persona, "object": "model", "created": created, "owned_by": "eko"}


def completion_body(
    *,
    completion_id: str,
    model: str,
    content: str,
    finish_reason: str,
    usage: dict[str, int],
    created: int | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message = {**message, "content": content or None, "tool_calls": tool_calls}
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created or int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def chunk_body(
    *,
    completion_id: str,
    model: str,
    created: int,
    delta: dict[str, Any] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": []
        if delta is None
        else [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        body["usage"] = usage
    return body
