"""The stages of one message, as small protocols the chat service composes.

    stored user message
      -> short-circuits, in order (quota paywall, memory guard): the first Draft wins, no writer
      -> the writer (simple reply path, or the chat engine): always a Draft
      -> the Draft is stored once (idempotent on the user message)
      -> after-reply hooks, off the request path (memory, summaries, guard learning)

Features plug in here instead of editing the service.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from eko.chat.reply_meta import ReplyMeta
from eko.memory.recent import RecentWindow
from eko.store.models import Message, Room, User


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything a stage may look at for one user message."""

    user: User
    room: Room
    user_message: Message
    # The turns before the message that the model reads verbatim: read once per message
    # (ChatService, before the writer) and handed to the context loader, memory and the chain.
    recent: RecentWindow | None = None


@dataclass(slots=True)
class Draft:
    """An assistant answer not yet stored."""

    content: str
    type: str = "message"  # message | cached_response | paywall | fallback
    meta: ReplyMeta = field(default_factory=ReplyMeta)
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


class ShortCircuit(Protocol):
    """A stage that may answer without the writer (and without any model call)."""

    name: str

    async def respond(self, turn: Turn) -> Draft | None: ...


class Writer(Protocol):
    """Produces the answer. Must never raise for model failures: fall back to a safe Draft."""

    async def write(self, turn: Turn) -> Draft: ...


class AfterReply(Protocol):
    """Work done after the reply is stored, off the request path; failures are logged only."""

    name: str

    async def after(self, turn: Turn, reply: Message) -> None: ...
