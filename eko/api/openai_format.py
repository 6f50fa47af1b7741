"""A request's `response_format`, `tools` and `tool_choice`, read into what the model is held
to (eko/llm/caller_format.py), or refused with OpenAI's 400 when they cannot be honoured.

- `response_format`: `text` (or none) is prose; `json_object` any JSON object; `json_schema`
  JSON valid against `json_schema.schema` (strict or not: the answer is validated either way).
- `tools`: functions only, each with a name and a JSON-schema `parameters`.
- `tool_choice`: `none` (the tools are not offered: prose, accepted without tools too),
  `auto` (the default: a call or an answer), `required` (a call), or a named function.
"""

from __future__ import annotations

from typing import Any

from eko.api.schemas.openai import CompletionRequest, OpenAIError
from eko.llm.caller_format import CallerFormat, call_function, check_schema

RESPONSE_FORMATS = ("text", "json_object", "json_schema")


def caller_format_of(request: CompletionRequest) -> CallerFormat | None:
    """What the reply must be; None for prose."""
    response_format = _response_format(request.response_format)
    choice = request.tool_choice
    tools = _tools(request.tools or [])
    if choice is None or choice == "auto":
        choice = "auto" if tools else None
    elif choice == "none":
        tools, choice = [], None
    elif choice == "required":
        if not tools:
            raise _bad("tool_choice 'required' needs `tools`.", "tool_choice")
    elif isinstance(choice, dict):
        name = call_function(choice).get("name")
        if choice.get("type") != "function" or not isinstance(name, str):
            raise _bad("tool_choice names a function: {'type': 'function', ...}.", "tool_choice")
        if name not in [tool["function"]["name"] for tool in tools]:
            raise _bad(f"tool_choice names {name!r}, which is not in `tools`.", "tool_choice")
    else:
        raise _bad("tool_choice is 'none', 'auto', 'required' or a function.", "tool_choice")
    if response_format is None and not tools:
        return None
    return CallerFormat(response_format=response_format, tools=tuple(tools), tool_choice=choice)


def _response_format(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    kind = value.get("type")
    if kind not in RESPONSE_FORMATS:
        raise _bad(
            f"response_format.type is one of {', '.join(RESPONSE_FORMATS)}.",
            "response_format.type",
        )
    if kind == "text":
        return None
    if kind == "json_schema":
        spec = value.get("json_schema")
        if not isinstance(spec, dict):
            raise _bad("response_format.json_schema is an object.", "response_format.json_schema")
        schema = spec.get("schema")
        if schema is not None:
            problem = check_schema(schema) if isinstance(schema, dict) else "not an object"
            if problem is not None:
                raise _bad(
                    f"response_format.json_schema.schema is not a usable JSON schema: {problem}",
                    "response_format.json_schema.schema",
                )
    return dict(value)


def _tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        function = tool.get("function")
        if tool.get("type") != "function" or not isinstance(function, dict):
            raise _bad(f"{where}: Eko offers function tools only.", where)
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise _bad(f"{where}.function.name is missing.", f"{where}.function.name")
        parameters = function.get("parameters")
        if parameters is not None:
            problem = check_schema(parameters) if isinstance(parameters, dict) else "not an object"
            if problem is not None:
                raise _bad(
                    f"{where}.function.parameters is not a usable JSON schema: {problem}",
                    f"{where}.function.parameters",
                )
    return [dict(tool) for tool in tools]


def _bad(message: str, param: str) -> OpenAIError:
    return OpenAIError(400, message, param=param, code="invalid_value")
