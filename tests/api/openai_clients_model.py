"""The scripted model behind the client-library tests: it answers as a capable model would
when a client asks for JSON or tools, and keeps every writer request it was sent.

- prose: "Vu: <the user's last message>";
- JSON (`response_format`): an instance of the caller's schema;
- tools: a call to the named (else the first) tool with arguments of its schema, or, once a
  tool's result is in the conversation, a prose answer quoting it.

`native=True` answers tool calls as a remote OpenAI-compatible model does (`tool_calls`);
`native=False` as the local model held by its grammar does (JSON text of the answer schema).
"""

from __future__ import annotations

import json
from typing import Any

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest, ProviderResponse, Usage

TOOL_RESULT = "[tool result"


def example(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small instance of a JSON schema (the shapes the clients' tests use)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return example(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return example(schema[key][0], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: example(sub, defs) for name, sub in properties.items()}
    if kind == "array":
        return [example(schema.get("items", {"type": "string"}), defs)]
    return {"string": "Paris", "integer": 42, "number": 1.5, "boolean": True, "null": None}[kind]


def said(request: ProviderRequest) -> str:
    """The user's last message, without the writer's reply-language note."""
    return request.messages[-1].content.split("\n\n(")[0]


def client_model(calls: list[ProviderRequest], *, native: bool = True) -> FunctionModel:
    def answer(request: ProviderRequest) -> str | ProviderResponse:
        caller = request.caller_format
        if caller is None and request.json_schema is not None:
            return "not json"  # the orchestrator's deterministic fallback routes
        calls.append(request)
        if caller is None:
            return f"Vu: {said(request)}"
        if not caller.tools:
            return json.dumps(example(caller.json_schema()))
        if TOOL_RESULT in said(request) and not caller.call_required:
            result = said(request).split("]\n", 1)[-1]
            return f"D'après l'outil : {result}" if native else json.dumps({"answer": result})
        name = caller.forced_tool or caller.tool_names[0]
        tool = next(t for t in caller.tools if t["function"]["name"] == name)
        arguments = example(tool["function"].get("parameters") or {"type": "object"})
        if not native:
            return json.dumps({"name": name, "arguments": arguments})
        call = {
            "id": f"call_{len(calls)}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return ProviderResponse(text="", usage=Usage(10, 5), model="function", tool_calls=(call,))

    return FunctionModel(answer)
