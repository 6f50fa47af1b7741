"""The stages of one message, as small protocols the chat service composes.

    stored user message
      -> short-circuits, in order (quota paywall, memory guard): the first Draft wins, no writer
         (a Note instead: the stage passes, its metadata goes on the writer's reply)
      -> the writer (simple reply path, or the chat engine): always a Draft
      -> the Draft is stored once (idempotent on the user message)
      -> after-reply hooks, off the request path (memory, summaries, guard learning):
         jobs of eko/jobs/after_reply.py

Features plug in here instead of editing the service.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.reply_meta import ReplyMeta
from eko.memory.turn import Turn

# Work that belongs with the stored reply: run in the transaction that stores it (e.g. the
# memory guard's usage count of the entry a cached reply serves).
StoredWith = Callable[[AsyncSession], Awaitable[None]]

__all__ = ["Draft", "Note", "ReadsAhead", "ShortCircuit", "Turn", "Writer"]


@dataclass(slots=True)
class Draft:
    """An assistant answer not yet stored."""

    content: str
    type: str = "message"  # message | cached_response | paywall | fallback
    meta: ReplyMeta = field(default_factory=ReplyMeta)
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    stored_with: StoredWith | None = None


@dataclass(frozen=True, slots=True)
class Note:
    """A short-circuit that did not answer but has something to say about it (the memory
    guard refused a close entry, and why): set on the metadata of the reply made instead."""

    meta: dict[str, Any]


class ShortCircuit(Protocol):
    """A stage that may answer without the writer (and without any model call)."""

    name: str

    async def respond(self, turn: Turn) -> Draft | Note | None: ...


@runtime_checkable
class ReadsAhead(Protocol):
    """A short-circuit that reads what it needs in the session that reads the turn's user and
    recent window (one transaction fewer); `respond` finds it in `turn.read_ahead[name]`. A
    value whose `answers` is True says the stage will answer: the recent window is then not
    read (a writer reads it itself if the stage does not answer after all)."""

    name: str

    async def read_ahead(self, session: AsyncSession, turn: Turn) -> object: ...


class Writer(Protocol):
    """Produces the answer. Must never raise for model failures: fall back to a safe Draft."""

    async def write(self, turn: Turn) -> Draft: ...
