"""Turn: what every stage of one user message reads — its author, its room, the message itself
and the recent window read once for it.

The chat pipeline's stages (eko/chat/pipeline.py, which names it for the chat package) and the
after-reply hooks that the jobs layer runs (eko/jobs/after_reply.py, which reloads the rows by
id) share it. It sits in memory, below both, because the recent window is memory's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

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
    # True once `user` is as stored after the message was counted against the quota (the row
    # the counting UPDATE returned, or read again since): the stages read its quota from it,
    # not the database.
    user_current: bool = False
    # What the short-circuit stages read in that same session, by stage name (the memory
    # guard's exact key): no transaction of their own for it.
    read_ahead: Mapping[str, object] = field(default_factory=dict)
