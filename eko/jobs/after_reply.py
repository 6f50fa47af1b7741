"""After-reply hooks (memory extraction, summaries, cache learning) as jobs.

Each hook is a job named `after_reply.<hook name>` whose arguments are ids only (room, user,
user message, reply): the job reloads them, so it can run in another process or after a
restart. Jobs of one room share a lock: one runs at a time per room, in order. A hook that
declares `uses_model = True` waits, re-queued with backoff, while no provider is reachable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from eko.chat.pipeline import AfterReply, Turn
from eko.jobs.queue import JobQueue
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.store.db import Database
from eko.store.models import Message, Room, User

log = structlog.get_logger("eko.jobs")

PREFIX = "after_reply."


def room_lock(room_id: str) -> str:
    return f"room:{room_id}"


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
        args = {
            "room_id": turn.room.id,
            "user_id": turn.user.id,
            "user_message_id": turn.user_message.id,
            "reply_id": reply.id,
        }
        for hook in self.hooks:
            await queue.enqueue(self.job_name(hook), args, lock=room_lock(turn.room.id))

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
            await hook.after(Turn(user=user, room=room, user_message=user_message), reply)

        return run
