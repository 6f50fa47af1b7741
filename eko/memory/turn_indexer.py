"""Keeping the turn index (turn_index.py) up to date: what writes a room's missing vectors.

Three writers, one lock per room in this process (Database.keyed_locks):
- after each reply, the TurnIndexHook job embeds the exchange and any newer message still
  missing (`catch_up`, the newest BATCH);
- a context build catches up the turns its search can return (older than the recent window)
  that are still missing (`within`): none while the jobs keep up; a safety net bounded in turns
  and in time, skipped while this process is indexing the room already (an import's job: the
  request searches what is indexed so far, full-text recall covers the rest);
- an imported history is indexed by its own job, batch by batch (`index_missing`,
  eko/jobs/turn_indexing.py).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from time import monotonic

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.memory.turn_index import BATCH, TurnIndex
from eko.memory.turns import ChatTurn
from eko.store.db import Database
from eko.store.locks import KeyedLocks
from eko.store.models import Message

log = structlog.get_logger("eko.memory")

# A context build's catch-up embeds this many turns at a time, and stops between two once its
# time is up.
CATCH_UP_CHUNK = 8
# Rooms whose looked-at turns this process remembers (the least recently looked at forgotten).
CHECKED_ROOMS = 10_000


def lock_key(room_id: str) -> str:
    """The per-process lock of a room's turn index: one writer of its vectors at a time."""
    return f"turn-index:{room_id}"


class TurnIndexer:
    def __init__(self, index: TurnIndex, *, locks: KeyedLocks) -> None:
        """`locks`: this process's keyed locks (Database.keyed_locks), one writer per room."""
        self._index = index
        self._locks = locks
        # Per room, the seq before which the last look (`within`, or an exchange's job in this
        # process, `catch_up`) left nothing to index: the next `within` starts there, over the
        # turns since (none when the job ran: no statement at all), instead of probing the
        # newest turns' vectors again on every message. (A vector deleted by another process
        # under that mark is left to `eko memory reindex`, as an older gap is.)
        self._looked_below: OrderedDict[str, int] = OrderedDict()

    async def catch_up(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        limit: int | None = BATCH,
        before_seq: int | None = None,
    ) -> int:
        """Embed the room's newest messages not yet indexed (among the newest `limit`, None =
        all; only those before `before_seq` when given) and commit them. Returns how many
        were indexed.

        Concurrent requests catch up the same turns: within a process they take turns per
        room, so one that waited finds what the other just committed and embeds nothing
        twice (the wait holds no connection when the session has not run a statement yet).
        Another process writing the same turns meanwhile is harmless: vectors are upserted.
        """
        async with self._locks.hold(lock_key(room_id)):
            look = await self._index.look(
                session, room_id=room_id, limit=limit, before_seq=before_seq
            )
            indexed = await self._index.index(session, room_id, look.missing)
            if indexed:  # nothing written: no round trip to commit nothing
                await session.commit()
        if before_seq is None and look.newest_seq is not None:
            # The room's newest turns, all looked at: a context build's catch-up (`within`)
            # starts after them.
            self._looked(room_id, look.newest_seq + 1)
        return indexed

    async def within(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        limit: int,
        before_seq: int | None,
        seconds: float,
    ) -> int:
        """A request's catch-up (catch_up's), bounded in time: CATCH_UP_CHUNK turns at a time,
        none started once `seconds` have passed; nothing at all while this process is
        indexing the room already (an import's job holds its lock batch after batch, and a
        request waiting for it would wait for the whole history). Returns how many."""
        key = lock_key(room_id)
        if self._locks.busy(key):
            return 0
        looked = self._looked_below.get(room_id)
        if looked is not None and before_seq is not None and looked >= before_seq:
            return 0  # no turn before `before_seq` came since the last look
        deadline = monotonic() + seconds
        indexed = 0
        async with self._locks.hold(key):
            look = await self._index.look(
                session, room_id=room_id, limit=limit, before_seq=before_seq, from_seq=looked
            )
            missing = look.missing
            # Newest first: the turns just older than the recent window are the likeliest asked.
            missing.reverse()
            whole = True
            for start in range(0, len(missing), CATCH_UP_CHUNK):
                if monotonic() >= deadline:
                    whole = False
                    break
                done = await self._index.index(
                    session, room_id, missing[start : start + CATCH_UP_CHUNK]
                )
                if done:
                    await session.commit()
                indexed += done
        if whole and before_seq is not None:
            self._looked(room_id, before_seq)
        return indexed

    def _looked(self, room_id: str, below: int) -> None:
        self._looked_below[room_id] = max(below, self._looked_below.get(room_id, below))
        self._looked_below.move_to_end(room_id)
        while len(self._looked_below) > CHECKED_ROOMS:
            self._looked_below.popitem(last=False)

    async def index_missing(
        self,
        session: AsyncSession,
        *,
        room_id: str,
        batch: int = BATCH,
        progress: Callable[[int, int], Awaitable[None]] | None = None,
    ) -> int:
        """Embed every message of the room that has no vector yet, oldest first, `batch` at a
        time (one embedder call and one commit per batch; the room's lock held per batch only,
        so a request's catch-up or an exchange's job waits for one batch at most). `progress`
        gets (done, total) after each batch. Returns how many were indexed."""
        async with self._locks.hold(lock_key(room_id)):
            missing = (
                await self._index.look(session, room_id=room_id, limit=None, before_seq=None)
            ).missing
            await session.commit()  # no transaction held between batches
        total, done = len(missing), 0
        if progress is not None:
            await progress(0, total)
        for start in range(0, total, batch):
            async with self._locks.hold(lock_key(room_id)):
                chunk = await self._index.still_missing(session, missing[start : start + batch])
                await self._index.index(session, room_id, chunk)
                await session.commit()
            done = min(start + batch, total)
            if progress is not None:
                await progress(done, total)
        return done


class TurnIndexHook:
    """AfterReply: index the exchange just stored (the user message, the reply, and any newer
    message of the room still missing, other members' included), off the request path."""

    name = "memory.turn_index"
    # A cached reply is a turn too, and embedding it costs no model call.
    on_cached_reply = True

    def __init__(
        self,
        database: Database,
        indexer: TurnIndexer,
        *,
        limit: int = BATCH,
        cached_delay_s: float = 0.0,
    ) -> None:
        self._database = database
        self._indexer = indexer
        self._limit = limit
        # After a cached reply the job runs this much later (EKO_MEMORY_INDEX_CACHED_DELAY_S);
        # it indexes whatever the room is missing then, so a burst needs one embedder call.
        self.cached_delay_s = cached_delay_s

    async def after(self, turn: ChatTurn, reply: Message) -> None:
        async with self._database.session() as session:
            indexed = await self._indexer.catch_up(session, room_id=turn.room.id, limit=self._limit)
        log.debug("memory.turns.indexed", room_id=turn.room.id, count=indexed)
