"""Knowledge tools: the docs scopes (shared documentation, and the files attached to the
caller's room) and web search (when configured).

The services are the chat's (eko.chat.docs, eko.chat.websearch); the chain reads them through
the small protocols below, so it never imports the chat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from eko.chain.tools.registry import Tool, ToolContext

MAX_SNIPPET_CHARS = 400


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _DocHit(Protocol):
    @property
    def scope(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def score(self) -> float: ...


class DocsSearch(Protocol):
    """What search_docs needs of the docs service: `room_id` adds that room's own scope (its
    attachments) to the shared ones; no other room's is ever listed or searched."""

    async def list_scopes(self, *, room_id: str | None = None) -> Sequence[_Named]: ...

    async def search(
        self,
        query: str,
        *,
        scopes: Sequence[str],
        limit: int | None = None,
        room_id: str | None = None,
    ) -> Sequence[_DocHit]: ...


class _WebSource(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def domain(self) -> str: ...
    @property
    def snippet(self) -> str: ...


class _WebFound(Protocol):
    @property
    def answer(self) -> str | None: ...
    @property
    def sources(self) -> Sequence[_WebSource]: ...


class WebSearch(Protocol):
    """What web_search needs of the web search provider."""

    async def search(self, query: str, *, max_results: int) -> _WebFound: ...


def docs_tool(docs: DocsSearch) -> Tool:
    async def search_docs(context: ToolContext, args: dict[str, Any]) -> Any:
        scope = args.get("scope")
        room_id = context.room.id
        scopes = (
            [str(scope)]
            if scope
            else [info.name for info in await docs.list_scopes(room_id=room_id)]
        )
        hits = await docs.search(
            str(args["query"]), scopes=scopes, limit=int(args.get("k", 5)), room_id=room_id
        )
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
        "Search the documentation scopes and the files attached to this conversation"
        " (optionally one scope by name).",
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


def web_tool(web: WebSearch, *, max_results: int) -> Tool:
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
