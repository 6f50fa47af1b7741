"""The chain's tools: registry and built-ins (memory, summaries, docs, web, workspace)."""

from __future__ import annotations

from pathlib import Path

from eko.chain.tools.knowledge import DocsSearch, WebSearch, docs_tool, web_tool
from eko.chain.tools.memory import memory_tools
from eko.chain.tools.registry import Tool, ToolContext, ToolError, ToolRegistry, ToolResult
from eko.chain.tools.workspace import Workspace, workspace_tools
from eko.memory.items import MemoryItems
from eko.memory.summaries.reads import SummaryReader

__all__ = [
    "DocsSearch",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "WebSearch",
    "Workspace",
    "build_tools",
]


def build_tools(
    *,
    items: MemoryItems | None = None,
    summaries: SummaryReader | None = None,
    docs: DocsSearch | None = None,
    web: WebSearch | None = None,
    web_max_results: int = 5,
    workspace: Path | None = None,
    timeout_s: float = 15.0,
) -> ToolRegistry:
    """The built-in tools for what is configured: no web provider, no web_search; no
    workspace folder, no workspace tools."""
    tools: list[Tool] = []
    if items is not None:
        tools += memory_tools(items, summaries)
    if docs is not None:
        tools.append(docs_tool(docs))
    if web is not None:
        tools.append(web_tool(web, max_results=web_max_results))
    if workspace is not None:
        tools += workspace_tools(Workspace(workspace))
    return ToolRegistry.of(tools, timeout_s=timeout_s)
