"""Native tool calling on OpenAI-compatible providers, behind the runtime's plain text API.

`NativeToolsProvider` wraps a provider: it adds the registry's tools to the request (the
`tools` field of `/chat/completions`) and turns the `tool_calls` the model answers with into
the text format `[TOOL:name:{args}]`, so the chain reads one format whatever the model, and
the runtime (fallback, breakers, llm_calls) is used unchanged. Results go back to the model as
ordinary messages, which every OpenAI-compatible server accepts.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from eko.chain.tool_calls import render_call
from eko.chain.tools.registry import ToolRegistry
from eko.llm.types import Provider, ProviderRequest, ProviderResponse


def openai_tools(registry: ToolRegistry) -> tuple[dict[str, Any], ...]:
    """The request's `tools` field: one function per registered tool."""
    return tuple(
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in registry.tools.values()
    )


def calls_as_text(tool_calls: tuple[dict[str, Any], ...]) -> str:
    """Native `tool_calls` in the text format; unreadable arguments keep the raw text, so the
    parser reports them to the model as an error."""
    parts = []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        raw = function.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            parts.append(f"[TOOL:{function['name']}:{raw}]")
            continue
        if isinstance(args, dict):
            parts.append(render_call(function["name"], args))
        else:
            parts.append(f"[TOOL:{function['name']}:{json.dumps(args)}]")
    return "\n".join(parts)


class NativeToolsProvider:
    """A provider asked with native tools; its tool calls come back as text."""

    def __init__(self, inner: Provider, tools: tuple[dict[str, Any], ...]) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.tools = tools

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        response = await self.inner.generate(dataclasses.replace(request, tools=self.tools))
        if not response.tool_calls:
            return response
        text = "\n".join(
            part for part in (response.text, calls_as_text(response.tool_calls)) if part
        )
        return dataclasses.replace(response, text=text)

    async def aclose(self) -> None:
        """The inner provider belongs to the services; it is closed there."""
