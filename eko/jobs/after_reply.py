"""After-reply hooks (memory extraction, summaries, cache learning) as jobs.

Each hook is a job named `after_reply.<hook name>` whose arguments are ids only (room, user,
user message, reply): the job reloads them, so it can run in another process or after a
restart. Jobs of one room share a lock: one runs at a time per room, in order. A hook that
declares `uses_model = True` waits, re-queued with backoff, while no provider is reachable.

A reply served from the memory guard's cache costs no model call, in the background either: no
hook runs for it unless it declares `on_cached_reply = True`. Summaries still cover it: the
next model-answered exchange's summary job reads the room from the database. Memory extraction
does not (it reads the exchange and the one message before it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.jobs.queue import JobQueue
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.memory.turn import Turn
from eko.store.db import Database
from eko.store.models import Message, Room, User

log = structlog.get_logger("eko.jobs")

PREFIX = "after_reply."
# Reply types answered without a model (the memory guard's cache).
CACHED_REPLY_TYPES = frozenset({"cached_response"})


class AfterReply(Protocol):
    """Work done after the reply is stored, off the request path; failures are logged only."""

    name: str

    async def after(self, turn: Turn, reply: Message) -> None: ...


def runs_for(hook: AfterReply, reply: Message) -> bool:
    """Whether `hook` runs after `reply`: every reply, except cached ones for hooks that did
    not ask for them."""
    if reply.type in CACHED_REPLY_TYPES:
        return bool(getattr(hook, "on_cached_reply", False))
    return True


def delay_for(hook: AfterReply, reply: Message) -> float:
    """Seconds before `hook`'s job may run: a hook that runs after cached replies may ask for
    them to wait (`cached_delay_s`), the others run at once."""
    if reply.type in CACHED_REPLY_TYPES:
        return float(getattr(hook, "cached_delay_s", 0.0))
    return 0.0


def lock_for(room_id: str, delay_s: float) -> str | None:
    """The room's lock runs its jobs one at a time in arrival order, so a job that waits would
    hold back every job queued after it: a delayed job takes none (the one hook that asks for a
    delay, the recall index, keeps its own per-room lock; eko/memory/turn_indexer.py)."""
    return None if delay_s > 0 else room_lock(room_id)


def room_lock(room_id: str) -> str:
    return f"room:{room_id}"


def _args(turn: Turn, reply: Message) -> dict[str, Any]:
    return {
        "room_id": turn.room.id,
        "user_id": turn.user.id,
        "user_message_id": turn.user_message.id,
        "reply_id": reply.id,
    }


class AfterReplyJobs:
    def __init__(
        self, database: Database, hooks: Sequence[AfterReply], *, max_attempts: int = 5
    ) -> None:
        self._database = database
        self.hooks = list(hooks)
        self._max_attempts = max_attempts

    def job_name(self, hook: AfterReply) -> str:
        return f"{PREFIX}{hook.name}"

    def register(self, registry: JobRegistry) -> None:
        for hook in self.hooks:
            registry.register(
                JobDefinition(
                    self.job_name(hook),
                    self._handler(hook),
                    max_attempts=self._max_attempts,
                    uses_model=bool(getattr(hook, "uses_model", False)),
                )
            )

    async def enqueue(self, queue: JobQueue, turn: Turn, reply: Message) -> None:
        """Each hook's job, each in its own transaction (a regenerated reply: the new version
        is already stored)."""
        for hook in self.hooks:
            if runs_for(hook, reply):
                delay_s = delay_for(hook, reply)
                await queue.enqueue(
                    self.job_name(hook),
                    _args(turn, reply),
                    lock=lock_for(turn.room.id, delay_s),
                    delay_s=delay_s,
                )

    async def enqueue_in(
        self, session: AsyncSession, queue: JobQueue, turn: Turn, reply: Message
    ) -> int:
        """Each hook's job inside the reply's own transaction: a stored reply always has its
        background work queued (and a rolled-back one has none). Returns how many."""
        count = 0
        for hook in self.hooks:
            if runs_for(hook, reply):
                delay_s = delay_for(hook, reply)
                await queue.enqueue_in(
                    session,
                    self.job_name(hook),
                    _args(turn, reply),
                    lock=lock_for(turn.room.id, delay_s),
                    delay_s=delay_s,
                )
                count += 1
        return count

    def _handler(self, hook: AfterReply) -> Any:
        database = self._database

        async def run(args: dict[str, Any]) -> None:
            async with database.session() as session:
                room = await session.get(Room, args["room_id"])
                user = await session.get(User, args["user_id"])
                user_message = await session.get(Message, args["user_message_id"])
                reply = await session.get(Message, args["reply_id"])
            if room is None or user is None or user_message is None or reply is None:
                # Deleted since (a room removed, a test database emptied): nothing to do.
                log.info("jobs.after_reply.gone", hook=hook.name, **args)
                return
            if not runs_for(hook, reply):
                return  # queued before it was a cached reply (or by an older version)
            await hook.after(Turn(user=user, room=room, user_message=user_message), reply)

        return run
