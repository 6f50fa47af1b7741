"""The job that embeds a room's unindexed turns after an import, batch by batch, with progress.

An imported history (eko/chat/history_import.py) is stored at once and indexed here, off the
request path: one embedder call per batch, `memory.indexing` events (room members see them on
/v1/events; `eko rooms import` draws its progress bar from them), then `memory.indexed`.
Full-text recall finds the imported turns from the moment they are stored; recall by meaning
covers each batch as it is committed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.events.types import Event, EventBus
from eko.jobs.queue import JobQueue
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.store.db import Database

log = structlog.get_logger("eko.jobs")

INDEX_TURNS = "memory.index_turns"
PROGRESS = "memory.indexing"
DONE = "memory.indexed"


class MissingTurns(Protocol):
    """TurnIndexer.index_missing (eko/memory/turn_indexer.py)."""

    async def index_missing(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        batch: int = ...,
        progress: Callable[[int, int], Awaitable[None]] | None = None,
    ) -> int: ...


def indexing_lock(room_id: str) -> str:
    return f"turn-index:{room_id}"


def register_turn_indexing(
    registry: JobRegistry,
    *,
    database: Database,
    index: MissingTurns,
    events: EventBus,
    batch: int,
) -> None:
    async def run(args: dict[str, Any]) -> None:
        room_id = str(args["room_id"])

        async def progress(done: int, total: int) -> None:
            await events.publish(
                Event(type=PROGRESS, room_id=room_id, data={"done": done, "total": total})
            )

        async with database.session() as session:
            indexed = await index.index_missing(
                session, room_id=room_id, batch=batch, progress=progress
            )
        await events.publish(Event(type=DONE, room_id=room_id, data={"indexed": indexed}))
        log.info("memory.turns.imported_indexed", room_id=room_id, count=indexed)

    registry.register(JobDefinition(INDEX_TURNS, run, max_attempts=5))


async def enqueue_turn_indexing(queue: JobQueue, room_id: str) -> int | None:
    """Queue the room's indexing; None when one is queued already and not started (it will
    index these turns too)."""
    return await queue.enqueue(
        INDEX_TURNS,
        {"room_id": room_id},
        lock=indexing_lock(room_id),
        queueing_lock=indexing_lock(room_id),
    )
