"""What an API caller asked a reply to be: JSON (of a schema) or tool calls — OpenAI's
`response_format`, `tools` and `tool_choice` — and how an answer is held to it.

Providers get it on the request (ProviderRequest.caller_format). A remote OpenAI-compatible
provider passes it through as it came (eko/llm/providers/openai_compat.py). A local model is
held to `answer_schema()` by a grammar: the caller's JSON schema, or, for tools, a choice
between the tools (`{"name": <a tool>, "arguments": <its parameters>}`) and, unless a tool
is required, a plain `{"answer": "..."}`. Whatever the provider, `read` checks the answer:
native tool calls name a tool given, with JSON-object arguments; JSON text validates against
the schema; an answer that does not is re-asked once by the runtime (provider_walk.py).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from typing import Any

import jsonschema_rs

from eko.llm.structured import StructuredOutputError, strip_json_fence
from eko.llm.types import ProviderResponse

# Any JSON object (`json_object`, and a `json_schema` format that names no schema).
ANY_OBJECT: dict[str, Any] = {"type": "object"}
_MAX_ERRORS = 3


@dataclass(frozen=True, slots=True)
class CallerFormat:
    """The caller's `response_format` (json_object / json_schema, verbatim), `tools` and
    `tool_choice` ("auto", "required" or {"type": "function", "function": {"name": ...}})."""

    response_format: dict[str, Any] | None = None
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        """What the reply is: "tools" (tool calls or text), "json_schema" or "json_object"."""
        if self.tools:
            return "tools"
        return str((self.response_format or {}).get("type") or "json_object")

    @property
    def tool_names(self) -> list[str]:
        return [_function(tool).get("name", "") for tool in self.tools]

    @property
    def forced_tool(self) -> str | None:
        """The tool the caller named in `tool_choice`, if it named one."""
        name = _function(self.tool_choice).get("name")
        return name if isinstance(name, str) else None

    @property
    def call_required(self) -> bool:
        return self.tool_choice == "required" or self.forced_tool is not None

    def json_schema(self) -> dict[str, Any]:
        """The schema a JSON reply must match (json_object: any object)."""
        if self.response_format is None or self.response_format.get("type") != "json_schema":
            return dict(ANY_OBJECT)
        schema = (self.response_format.get("json_schema") or {}).get("schema")
        return dict(schema) if isinstance(schema, dict) else dict(ANY_OBJECT)

    def answer_schema(self) -> dict[str, Any]:
        """What a model without native tools or JSON modes is held to, by grammar."""
        if not self.tools:
            return self.json_schema()
        names = [self.forced_tool] if self.forced_tool else self.tool_names
        calls = [_call_schema(tool) for tool in self.tools if _function(tool).get("name") in names]
        if self.call_required:
            return calls[0] if len(calls) == 1 else {"anyOf": calls}
        answer = {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        }
        return {"anyOf": [answer, *calls]}

    def read(self, response: ProviderResponse) -> ProviderResponse:
        """The response as the caller gets it (tool calls in OpenAI's shape, JSON text bare);
        raises StructuredOutputError for one that does not fit what was asked."""
        if self.tools:
            return self._read_tools(response)
        body = strip_json_fence(response.text)
        value = _json(body)
        _validate(value, self.json_schema())
        return replace(response, text=body)

    def _read_tools(self, response: ProviderResponse) -> ProviderResponse:
        if response.tool_calls:
            calls = tuple(self._checked_call(call) for call in response.tool_calls)
            return replace(response, tool_calls=calls)
        body = strip_json_fence(response.text)
        try:
            value = json.loads(body)
        except ValueError:
            value = None
        if isinstance(value, dict) and "name" in value and "arguments" in value:
            call = {
                "id": new_call_id(),
                "type": "function",
                "function": {
                    "name": value["name"],
                    "arguments": json.dumps(value["arguments"], ensure_ascii=False),
                },
            }
            return replace(response, text="", tool_calls=(self._checked_call(call),))
        if self.call_required:
            raise StructuredOutputError(
                "expected a tool call: a JSON object {name, arguments} naming one of "
                + ", ".join(self.tool_names)
            )
        text = response.text
        if isinstance(value, dict) and set(value) == {"answer"}:
            text = str(value["answer"])  # the grammar's answer branch (a local model)
        if self.response_format is not None:  # a plain answer, in the caller's JSON
            body = strip_json_fence(text)
            _validate(_json(body), self.json_schema())
            text = body
        # Else a plain answer (a model with native tools that chose none).
        return replace(response, text=text)

    def _checked_call(self, call: dict[str, Any]) -> dict[str, Any]:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        allowed = [self.forced_tool] if self.forced_tool else self.tool_names
        if not isinstance(name, str) or name not in allowed:
            raise StructuredOutputError(
                f"tool {name!r} is not one of the tools given ({', '.join(allowed)})"
            )
        assert isinstance(function, dict)
        raw = function.get("arguments")
        arguments = _json(raw) if isinstance(raw, str) else raw if raw is not None else {}
        if not isinstance(arguments, dict):
            raise StructuredOutputError(f"the arguments of {name} are not a JSON object")
        tool = next(t for t in self.tools if _function(t).get("name") == name)
        _validate(arguments, _function(tool).get("parameters") or ANY_OBJECT, where="arguments")
        return {
            "id": call.get("id") or new_call_id(),
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }

    def to_meta(self) -> dict[str, Any]:
        """Kept with the user message, so that whoever answers it (now, or the recovery loop
        later) answers it in this format."""
        meta: dict[str, Any] = {}
        if self.response_format is not None:
            meta["response_format"] = self.response_format
        if self.tools:
            meta["tools"] = list(self.tools)
        if self.tool_choice is not None:
            meta["tool_choice"] = self.tool_choice
        return meta

    @classmethod
    def from_meta(cls, meta: dict[str, Any] | None) -> CallerFormat | None:
        value = (meta or {}).get(META_KEY)
        if not isinstance(value, dict) or not value:
            return None
        return cls(
            response_format=value.get("response_format"),
            tools=tuple(value.get("tools") or ()),
            tool_choice=value.get("tool_choice"),
        )


# The user message's metadata key that carries the format.
META_KEY = "caller_format"


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def check_schema(schema: dict[str, Any]) -> str | None:
    """Why a JSON schema cannot be used, or None."""
    try:
        _validator(schema)
    except Exception as exc:  # whatever the schema: a 400 naming it, never a 500
        return (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    return None


def _validator(schema: dict[str, Any]) -> Any:
    # offline: a `$ref` to a URL is never fetched (it would be a request Eko makes for anyone).
    return jsonschema_rs.validator_for(schema, offline=True)


def render_tool_calls(calls: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> str:
    """Tool calls as text, for a model that reads the conversation as text."""
    lines = []
    for call in calls:
        function = _function(call)
        lines.append(
            f"[tool call {call.get('id', '')}: {function.get('name')}"
            f"({function.get('arguments') or '{}'})]"
        )
    return "\n".join(lines)


def _function(tool: Any) -> dict[str, Any]:
    function = tool.get("function") if isinstance(tool, dict) else None
    return function if isinstance(function, dict) else {}


def call_function(call: Any) -> dict[str, Any]:
    """A tool call's `function` ({name, arguments}); {} for a malformed call."""
    return _function(call)


def _call_schema(tool: dict[str, Any]) -> dict[str, Any]:
    function = _function(tool)
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    return {
        "type": "object",
        "properties": {"name": {"const": function.get("name")}, "arguments": parameters},
        "required": ["name", "arguments"],
    }


def _json(body: str) -> Any:
    if not body.strip():
        raise StructuredOutputError("empty answer, expected JSON")
    try:
        return json.loads(body)
    except ValueError:
        try:
            return json.loads(body, strict=False)  # raw newlines inside strings: clear enough
        except ValueError as exc:
            raise StructuredOutputError(f"not JSON: {exc}") from exc


def _validate(value: Any, schema: dict[str, Any], *, where: str = "") -> None:
    try:
        validator = _validator(schema)
    except Exception as exc:  # refused at the API already
        raise StructuredOutputError(f"unusable schema: {exc}") from exc
    errors = []
    for error in validator.iter_errors(value):
        path = ".".join(str(part) for part in (where, *error.instance_path) if part != "")
        errors.append(f"{path or '<root>'}: {error.message}")
        if len(errors) == _MAX_ERRORS:
            break
    if errors:
        raise StructuredOutputError("; ".join(errors)[:300])
