"""Structured output: the JSON schema a provider is asked for, and the parsing of its answer."""

from __future__ import annotations

import json
import re
import weakref
from typing import Any

from pydantic import BaseModel, ValidationError

from eko.llm.types import OutputT

# Chat models often wrap JSON in a Markdown fence even when told not to.
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*[ \t]*\n?(?P<body>.*?)\n?```$", re.DOTALL)

# Bounds the validation summary that goes into logs, records and the correction message.
_MAX_SUMMARY_CHARS = 300


class StructuredOutputError(ValueError):
    """The answer is not JSON, or does not validate against the output model."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


# The JSON text of each output model's schema. Generating one walks the whole model
# (milliseconds for the orchestrator's, on every structured call); by weak reference, so the
# models some callers build per call (create_model) go with their class.
_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def output_schema(output: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, a fresh dict each call (the caller may change it)."""
    text = _SCHEMAS.get(output)
    if text is None:
        text = _SCHEMAS[output] = json.dumps(output.model_json_schema())
    schema: dict[str, Any] = json.loads(text)
    return schema


def strip_json_fence(text: str) -> str:
    """The JSON body of an answer: surrounding whitespace and one ```json fence removed."""
    body = text.strip()
    match = _FENCE.match(body)
    if match:
        body = match.group("body").strip()
    return body


def parse_output(text: str, output: type[OutputT]) -> OutputT:
    """Parse and validate an answer; StructuredOutputError names what is wrong, briefly."""
    body = strip_json_fence(text)
    if not body:
        raise StructuredOutputError("empty answer, expected a JSON object")
    try:
        return output.model_validate_json(body)
    except ValidationError as exc:
        relaxed = _relaxed_json(body) if _is_invalid_json(exc) else None
        if relaxed is None:
            raise StructuredOutputError(summarize_validation_error(exc)) from exc
    try:
        return output.model_validate_json(relaxed)
    except ValidationError as exc:
        raise StructuredOutputError(summarize_validation_error(exc)) from exc


def _is_invalid_json(exc: ValidationError) -> bool:
    return any(error["type"] == "json_invalid" for error in exc.errors(include_url=False))


def _relaxed_json(body: str) -> str | None:
    """The body re-encoded if it is JSON but for raw control characters inside strings.

    Models (and llama-cpp-python's grammar) write literal newlines inside strings; the meaning
    is clear, so it is accepted rather than re-asked. Anything else stays invalid.
    """
    try:
        return json.dumps(json.loads(body, strict=False))
    except ValueError:
        return None


def summarize_validation_error(exc: ValidationError) -> str:
    """A one-line account of the first few errors (pydantic's own text is long and multi-line)."""
    parts: list[str] = []
    for error in exc.errors(include_url=False)[:3]:
        location = ".".join(str(part) for part in error["loc"]) or "<root>"
        parts.append(f"{location}: {error['msg']}")
    hidden = exc.error_count() - len(parts)
    if hidden > 0:
        parts.append(f"(+{hidden} more)")
    summary = "; ".join(parts)
    if len(summary) > _MAX_SUMMARY_CHARS:
        summary = summary[: _MAX_SUMMARY_CHARS - 1] + "…"
    return summary
