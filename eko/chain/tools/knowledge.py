"""Knowledge tools: the docs scopes (shared documentation) and web search (when configured)."""

from __future__ import annotations

from typing import Any

from eko.chain.tools.registry import Tool, ToolContext
from eko.chat.docs.service import DocsService
from eko.chat.websearch.base import WebSearchProvider

MAX_SNIPPET_CHARS = 400


def docs_tool(docs: DocsService) -> Tool:
    async def search_docs(_context: ToolContext, args: dict[str, Any]) -> Any:
        scope = args.get("scope")
        scopes = [str(scope)] if scope else [info.name for info in await docs.list_scopes()]
        hits = await docs.search(str(args["query"]), scopes=scopes, limit=int(args.get("k", 5)))
        return [
            {
                "scope": hit.scope,
                "title": hit.title,
                "source": hit.source,
                "content": hit.content[:MAX_SNIPPET_CHARS],
                "score": hit.score,
            }
            for hit in hits
        ]

    return Tool(
        "search_docs",
        "Search the documentation scopes (optionally one scope by name).",
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 500},
                "scope": {"type": "string", "maxLength": 100},
                "k": {"type": "integer", "minimum": 1, "maximum": 8},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        search_docs,
    )


def web_tool(web: WebSearchProvider, *, max_results: int) -> Tool:
    async def web_search(_context: ToolContext, args: dict[str, Any]) -> Any:
        found = await web.search(str(args["query"]), max_results=max_results)
        return {
            "answer": (found.answer or "")[: MAX_SNIPPET_CHARS * 2] or None,
            "sources": [
                {"title": s.title, "domain": s.domain, "snippet": s.snippet[:MAX_SNIPPET_CHARS]}
                for s in found.sources[:max_results]
            ],
        }

    return Tool(
        "web_search",
        "Search the web.",
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 300}},
            "required": ["query"],
            "additionalProperties": False,
        },
        web_search,
    )
