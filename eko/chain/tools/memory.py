"""Memory tools: search the caller's memories and summaries, remember a fact.

Visibility comes from eko/memory/scopes.py only: reads use `turn_keys` (a direct room: the
user's, the room's and global memory; a lobby: the lobby's and global), a fact is written
where `write_key` says (the user's private scope in a direct room, the lobby's in a lobby).
"""

from __future__ import annotations

from typing import Any

from eko.chain.tools.registry import Tool, ToolContext, ToolError
from eko.memory.items import MemoryItems, NewItem
from eko.memory.scopes import turn_keys, write_key
from eko.memory.summaries.reads import SummaryReader

MAX_HITS = 5
_QUERY = {"type": "string", "minLength": 1, "maxLength": 500}
_K = {"type": "integer", "minimum": 1, "maximum": MAX_HITS}


def memory_tools(items: MemoryItems, summaries: SummaryReader | None) -> list[Tool]:
    async def search_memories(context: ToolContext, args: dict[str, Any]) -> Any:
        kinds = [args["kind"]] if args.get("kind") else None
        hits = await items.search(
            keys=turn_keys(context.room, context.user),
            query=str(args["query"]),
            kinds=kinds,
            k=int(args.get("k", MAX_HITS)),
        )
        return [
            {
                "kind": hit.item.kind,
                "subject": hit.item.subject,
                "content": hit.item.content,
                "score": round(hit.score, 3),
            }
            for hit in hits
        ]

    async def remember_fact(context: ToolContext, args: dict[str, Any]) -> Any:
        try:
            new = NewItem(
                kind="fact",
                subject=str(args["subject"]),
                content=str(args["content"]),
                source_message_id=context.message_id,
                source_room_id=context.room.id,
            )
        except ValueError as exc:
            raise ToolError(str(exc)) from exc
        written = await items.remember(new, scope=write_key(context.room, context.user))
        return {"id": written.item.id, "created": written.created}

    async def search_summaries(context: ToolContext, args: dict[str, Any]) -> Any:
        assert summaries is not None
        try:
            views = await summaries.search(
                context.room.id,
                query=str(args["query"]),
                topic=args.get("topic") or None,
                k=int(args.get("k", MAX_HITS)),
            )
        except LookupError as exc:
            raise ToolError(str(exc)) from exc
        return [
            {
                "level": view.summary.level,
                "summary": view.summary.conversation_summary,
                "topics": view.topics,
                "score": round(view.similarity or 0.0, 3),
            }
            for view in views
        ]

    tools = [
        Tool(
            "search_memories",
            "Search what is remembered about the user (facts, self, goals).",
            {
                "type": "object",
                "properties": {
                    "query": _QUERY,
                    "kind": {"type": "string", "enum": ["fact", "self", "goal"]},
                    "k": _K,
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            search_memories,
        ),
        Tool(
            "remember_fact",
            "Remember a fact about the user (subject: short key, content: one sentence).",
            {
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "minLength": 1, "maxLength": 200},
                    "content": {"type": "string", "minLength": 1, "maxLength": 500},
                },
                "required": ["subject", "content"],
                "additionalProperties": False,
            },
            remember_fact,
            read_only=False,
        ),
    ]
    if summaries is not None:
        tools.append(
            Tool(
                "search_summaries",
                "Search the summaries of this conversation's past, optionally within a topic.",
                {
                    "type": "object",
                    "properties": {
                        "query": _QUERY,
                        "topic": {"type": "string", "maxLength": 200},
                        "k": _K,
                    },
                    "required": ["query"],
                    "additionalProperties": False,
                },
                search_summaries,
            )
        )
    return tools
