"""The OpenAPI description of Eko's OpenAI-compatible routes (eko/api/routers/openai_compat.py).

/v1/chat/completions reads its body itself, so that an invalid one is a 400 in OpenAI's error
shape rather than FastAPI's 422: FastAPI then knows nothing of the body. It is described here
from the same pydantic model (`completion_request_body`), with what the route answers: a
chat.completion, or its chunks as server-sent events with `stream: true`, and OpenAI-shaped
errors. Schemathesis (tests/api/test_schema_fuzz.py) fuzzes the route from this and checks
every response against it.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from eko.api.schemas.openai import CompletionRequest

JsonSchema = dict[str, Any]

ERROR_SCHEMA: JsonSchema = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
_USAGE: JsonSchema = {
    "type": "object",
    "description": "The model calls made for the message (none for a cached answer)",
    "required": ["prompt_tokens", "completion_tokens", "total_tokens"],
    "properties": {
        name: {"type": "integer", "minimum": 0}
        for name in ("prompt_tokens", "completion_tokens", "total_tokens")
    },
}
_FINISH_REASON: JsonSchema = {"enum": ["stop", "length"]}
COMPLETION_SCHEMA: JsonSchema = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices", "usage"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "chat.completion"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "required": ["index", "message", "finish_reason"],
                "properties": {
                    "index": {"const": 0},
                    "message": {
                        "type": "object",
                        "required": ["role", "content"],
                        "properties": {
                            "role": {"const": "assistant"},
                            "content": {"type": "string"},
                            "refusal": {"type": "null"},
                        },
                    },
                    "finish_reason": _FINISH_REASON,
                    "logprobs": {"type": "null"},
                },
            },
        },
        "usage": _USAGE,
    },
}
CHUNK_SCHEMA: JsonSchema = {
    "type": "object",
    "required": ["id", "object", "created", "model", "choices"],
    "properties": {
        "id": {"type": "string"},
        "object": {"const": "chat.completion.chunk"},
        "created": {"type": "integer"},
        "model": {"type": "string"},
        "choices": {
            "type": "array",
            "maxItems": 1,
            "items": {
                "type": "object",
                "required": ["index", "delta", "finish_reason"],
                "properties": {
                    "index": {"const": 0},
                    "delta": {
                        "type": "object",
                        "properties": {
                            "role": {"const": "assistant"},
                            "content": {"type": "string"},
                        },
                    },
                    "finish_reason": {"anyOf": [_FINISH_REASON, {"type": "null"}]},
                    "logprobs": {"type": "null"},
                },
            },
        },
        "usage": _USAGE,
    },
}
# One event of the stream: a chunk, an error (the answer failed mid-way), or the final [DONE].
_EVENT_SCHEMA: JsonSchema = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "data": {
            "type": "string",
            "if": {"const": "[DONE]"},
            "else": {
                "contentMediaType": "application/json",
                "contentSchema": {"anyOf": [CHUNK_SCHEMA, ERROR_SCHEMA]},
            },
        }
    },
}
_DESCRIPTIONS = {
    400: "Invalid or unsupported request (OpenAI error shape)",
    401: "Missing or invalid API key (OpenAI error shape)",
    404: "Unknown model or room (OpenAI error shape)",
    413: "Request body over the size limit (EKO_MAX_BODY_BYTES) (OpenAI error shape)",
    422: "A header or the URL refused (OpenAI error shape)",
    429: "Too many messages in flight; retry after Retry-After seconds (OpenAI error shape)",
    503: "No model answered, or the server or database is busy; retry after Retry-After "
    "seconds (OpenAI error shape, code model_unavailable when no model answered)",
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying",
        "schema": {"type": "integer", "minimum": 0},
    }
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI for these routes' errors: OpenAI's shape (eko/api/openai_errors.py rewrites
    the app's problem+json answers on these routes; problem+json stays listed so that
    eko.api.problems keeps these descriptions)."""
    responses: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        response: dict[str, Any] = {
            "description": _DESCRIPTIONS[status],
            "content": {
                "application/json": {"schema": ERROR_SCHEMA},
                "application/problem+json": {
                    "schema": {"$ref": "#/components/schemas/ProblemDetails"}
                },
            },
        }
        if status in (429, 503):
            response["headers"] = _RETRY_AFTER
        responses[status] = response
    return responses


def completion_responses() -> dict[int | str, dict[str, Any]]:
    """What POST /v1/chat/completions answers."""
    return {
        200: {
            "description": "A chat.completion; with `stream: true`, chat.completion.chunk "
            "events, then `data: [DONE]`",
            "headers": {
                "X-Eko-Room": {
                    "description": "The room the message was stored and answered in",
                    "required": True,
                    "schema": {"type": "string"},
                },
                "X-Eko-Ignored-Params": {
                    "description": "Parameters accepted but not applied, comma-separated",
                    "schema": {"type": "string"},
                },
            },
            "content": {
                "application/json": {"schema": COMPLETION_SCHEMA},
                "text/event-stream": {"schema": _EVENT_SCHEMA},
            },
        },
        **error_responses(400, 401, 404, 413, 422, 429, 503),
    }


def completion_request_body() -> dict[str, Any]:
    """The route's `openapi_extra`: its JSON body, as CompletionRequest reads it."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": inline_schema(CompletionRequest)}},
        }
    }


def inline_schema(model: type[BaseModel]) -> JsonSchema:
    """The model's JSON schema with its `$defs` put in place: in an OpenAPI document,
    "#/$defs/…" would be looked up from the document's root. (Models that refer to
    themselves cannot be inlined; none here does.)"""
    schema = model.model_json_schema()
    defs: dict[str, JsonSchema] = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                others = {key: value for key, value in node.items() if key != "$ref"}
                return {**resolve(copy.deepcopy(defs[ref.removeprefix("#/$defs/")])), **others}
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: JsonSchema = resolve(schema)
    return resolved
