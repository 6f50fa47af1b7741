"""MemoryVectorIndex: chosen collections searched in memory, in front of a database backend.

Writes go to the wrapped backend (the database stays the truth) and, once their transaction
commits, to the in-memory partitions; a rolled-back write only marks its items for a re-read.
A search loads the partitions it needs on first use (one query per missing set of keys) and
then runs one float32 matrix product per partition: exact, no round trip for the vectors.

Other processes learn of a committed change through a ChangeFeed (eko.events.vectors: the
event bus, PostgreSQL LISTEN/NOTIFY across workers): the changed items are marked and re-read
from the database by the next search that touches their collection. Where the feed does not
reach other processes (the in-process bus on SQLite with a separate `eko worker`),
`poll_new_rows` lets each search pick up rows added elsewhere (ids above the highest seen; one
primary-key lookup). Rows deleted elsewhere may linger until then: callers that serve what
they find (the memory guard) re-check their own rows anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import structlog
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from eko.store.vectors.base import (
    VectorHit,
    VectorIndex,
    VectorItem,
    VectorQuery,
    unit_rows,
)
from eko.store.vectors.changes import ChangeFeed, ChangeSubscription, VectorChange
from eko.store.vectors.hits import ranked_hits
from eko.store.vectors.lru import PartitionLru
from eko.store.vectors.memory_read import items_after, newest_id, read_items, read_scope, skip_own
from eko.store.vectors.partition import Partition, PartitionKey

log = structlog.get_logger("eko.store")

# Changed items marked in one collection beyond which its partitions are dropped and reloaded.
MAX_MARKED = 2_000
_PENDING = "eko_memory_vectors_pending"


@dataclass(slots=True)
class _Pending:
    """A write waiting for its transaction: applied on commit, re-read after a rollback."""

    collection: str
    model: str
    keys: list[str]
    item_ids: list[str]
    embedding_ids: list[int]
    vectors: np.ndarray | None  # None: a delete


class MemoryVectorIndex(VectorIndex):
    backend: ClassVar[str] = "memory"
    # Exact below `approximate_above` rows per partition, approximate (cells) above.
    exact: ClassVar[bool] = False

    def __init__(
        self,
        inner: VectorIndex,
        *,
        collections: frozenset[str],
        feed: ChangeFeed | None = None,
        poll_new_rows: bool = False,
        poll_interval_s: float = 0.0,
        approximate_above: int = 0,
        probes: int = 16,
        max_bytes: int = 0,
    ) -> None:
        """`approximate_above` > 0: a partition loaded with more rows is split into cells and
        searched in its `probes` nearest cells only (eko.store.vectors.ivf); 0: always exact.
        `poll_interval_s`: with `poll_new_rows`, at most one poll per interval (0: every
        search); this process's own writes are in memory at once either way."""
        self.inner = inner
        self.approximate_above = approximate_above
        self.probes = probes
        self.collections = collections
        self.poll_new_rows = poll_new_rows
        self.poll_interval_s = poll_interval_s
        self._polled_at = -math.inf  # time.monotonic() of the last poll
        self.origin = uuid.uuid4().hex
        self._feed = feed
        self._partitions: dict[PartitionKey, Partition] = {}
        self._lru = PartitionLru(max_bytes)  # sizes, search order; evicts over max_bytes (>0)
        self._where: dict[tuple[str, str], PartitionKey] = {}  # (collection, item) -> partition
        self._marked: dict[str, set[str]] = {}  # collection -> items to re-read
        self._seen_id = 0  # highest embedding id read (poll_new_rows)
        self._own_ids: set[int] = set()  # ids above it this process wrote and applied
        self._loading = 0  # loads waiting for the database
        self._load_lock = asyncio.Lock()  # one load at a time: concurrent first searches wait
        self._subscription: ChangeSubscription | None = None
        self._listener: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._splits: set[asyncio.Task[None]] = set()

    # --- what it holds ---

    @property
    def rows(self) -> int:
        return sum(len(partition) for partition in self._partitions.values())

    @property
    def nbytes(self) -> int:
        """Memory held by the vectors and their ids (item-id strings and maps not counted)."""
        return sum(partition.nbytes for partition in self._partitions.values())

    def loaded(self, collection: str) -> list[PartitionKey]:
        return [key for key in self._partitions if key.collection == collection]

    def drop(self, collection: str | None = None) -> None:
        """Forget partitions (all, or one collection's); the next search reloads them."""
        for key in [k for k in self._partitions if collection in (None, k.collection)]:
            del self._partitions[key]
            self._lru.forget(key)
        self._where = {where: key for where, key in self._where.items() if key in self._partitions}
        if collection is None:
            self._marked.clear()
        else:
            self._marked.pop(collection, None)

    # --- writes: the database first, memory after commit ---

    async def upsert_many(
        self,
        session: AsyncSession,
        *,
        collection: str,
        model: str,
        items: Sequence[VectorItem],
        vectors: np.ndarray,
    ) -> list[int]:
        ids = await self.inner.upsert_many(
            session, collection=collection, model=model, items=items, vectors=vectors
        )
        if collection in self.collections and ids:
            self._defer(
                session,
                _Pending(
                    collection=collection,
                    model=model,
                    keys=[item.key for item in items],
                    item_ids=[item.item_id for item in items],
                    embedding_ids=ids,
                    vectors=unit_rows(vectors),
                ),
            )
        return ids

    async def delete(
        self, session: AsyncSession, *, collection: str, item_ids: Sequence[str]
    ) -> int:
        deleted = await self.inner.delete(session, collection=collection, item_ids=item_ids)
        if collection in self.collections and item_ids:
            self._defer(session, _Pending(collection, "", [], list(item_ids), [], None))
        return deleted

    def _defer(self, session: AsyncSession, pending: _Pending) -> None:
        sync_session = session.sync_session
        if not event.contains(sync_session, "after_commit", self._after_commit):
            # Stay for the session's life (short): removing a listener while it runs fails.
            event.listen(sync_session, "after_commit", self._after_commit)
            event.listen(sync_session, "after_rollback", self._after_rollback)
        sync_session.info.setdefault(_PENDING, []).append(pending)

    def _after_commit(self, sync_session: Session) -> None:
        changed: dict[str, list[str]] = {}
        for pending in sync_session.info.pop(_PENDING, []):
            self._apply(pending)
            changed.setdefault(pending.collection, []).extend(pending.item_ids)
        if self._feed is not None:
            for collection, item_ids in changed.items():
                change = VectorChange(collection, tuple(dict.fromkeys(item_ids)), self.origin)
                self._spawn(self._feed.publish(change))

    def _after_rollback(self, sync_session: Session) -> None:
        for pending in sync_session.info.pop(_PENDING, []):
            self._mark(pending.collection, pending.item_ids)

    def _apply(self, pending: _Pending) -> None:
        if self._loading:
            # A load under way may have read these rows before this commit: re-read them.
            self._mark(pending.collection, pending.item_ids)
        for item_id in pending.item_ids:
            self._forget(pending.collection, item_id)
        if pending.vectors is None:
            return
        if self.poll_new_rows:  # in memory already: the poll need not read them back
            self._seen_id = skip_own(self._seen_id, self._own_ids, pending.embedding_ids)
        # An item given twice keeps its last row, as in the database.
        last = {item_id: i for i, item_id in enumerate(pending.item_ids)}
        for i in last.values():
            key = PartitionKey(
                pending.collection, pending.model, pending.vectors.shape[1], pending.keys[i]
            )
            self._put(key, pending.item_ids[i], pending.embedding_ids[i], pending.vectors[i])

    def _put(self, key: PartitionKey, item_id: str, embedding_id: int, vector: np.ndarray) -> None:
        partition = self._partitions.get(key)
        if partition is None:
            return  # not loaded: it will be read whole, with this row, when first searched
        partition.put_many([item_id], [embedding_id], vector.reshape(1, -1))
        self._where[(key.collection, item_id)] = key
        self._lru.record(key, partition.nbytes)

    def _forget(self, collection: str, item_id: str) -> None:
        key = self._where.pop((collection, item_id), None)
        if key is not None and key in self._partitions:
            self._partitions[key].remove(item_id)

    def _mark(self, collection: str, item_ids: Sequence[str]) -> None:
        marked = self._marked.setdefault(collection, set())
        marked.update(item_ids)
        if len(marked) > MAX_MARKED:
            self.drop(collection)

    def _spawn(self, coro: Any) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:
            coro.close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- search ---

    async def search_query(self, session: AsyncSession, query: VectorQuery) -> list[VectorHit]:
        return (await self.search_queries(session, [query]))[0]

    async def search_queries(
        self, session: AsyncSession, queries: Sequence[VectorQuery]
    ) -> list[list[VectorHit]]:
        first = queries[0]
        if first.collection not in self.collections:
            return await self.inner.search_queries(session, queries)
        wanted = [PartitionKey(first.collection, first.model, first.dim, key) for key in first.keys]
        with self._lru.using(wanted):  # pinned: never evicted while this search runs
            await self._listen()
            await self._catch_up(session, first.collection)
            while missing := [key for key in wanted if key not in self._partitions]:
                await self._load(session, missing)  # again if a drop() raced the load
            self._lru.evict(self._partitions, self._where)  # over the cap: least recent
        # A product per query: OpenBLAS takes longer for a few vectors at once (measured).
        parts = [(key.key, self._partitions[key]) for key in wanted]
        tops = [
            [(*row, name) for name, part in parts for row in part.top(q.vector, q.k)]
            for q in queries
        ]
        return [ranked_hits(rows, q.k, q.min_score) for rows, q in zip(tops, queries, strict=True)]

    async def _load(self, session: AsyncSession, keys: list[PartitionKey]) -> None:
        async with self._load_lock:
            keys = [key for key in keys if key not in self._partitions]  # loaded meanwhile
            if not keys:
                return
            # Commits while this runs are re-read after it (see _apply).
            self._loading += 1
            try:
                loaded = await self._read(session, keys)
            finally:
                self._loading -= 1
            for key, partition in loaded.items():
                self._partitions[key] = partition
                self._lru.record(key, partition.nbytes)
                for item_id in partition.item_ids():
                    self._where[(key.collection, item_id)] = key
                if self.approximate_above and len(partition) > self.approximate_above:
                    task = asyncio.create_task(self._split(key, partition))
                    self._splits.add(task)
                    task.add_done_callback(self._splits.discard)

    async def _split(self, key: PartitionKey, partition: Partition) -> None:
        """Split a copy into cells off the event loop (k-means: seconds at 100k rows), then
        put it in the partition's place unless a write changed the partition meanwhile (then
        try again). Searches stay exact until then."""
        for _ in range(3):
            twin = partition.copy()
            await asyncio.to_thread(twin.split, probes=self.probes)
            if self._partitions.get(key) is not partition:
                return  # dropped or reloaded meanwhile
            if partition.version == twin.version:
                self._partitions[key] = twin
                self._lru.record(key, twin.nbytes)
                return
            partition = self._partitions[key]
        log.info("vectors.split_deferred", key=key.key, reason="busy partition; exact for now")

    async def settled(self) -> None:
        """Wait for the background splits under way (tests, benchmarks)."""
        while self._splits:
            await asyncio.gather(*list(self._splits), return_exceptions=True)

    async def _read(
        self, session: AsyncSession, keys: list[PartitionKey]
    ) -> dict[PartitionKey, Partition]:
        first = keys[0]
        rows = await read_scope(
            session,
            collection=first.collection,
            model=first.model,
            dim=first.dim,
            keys=[key.key for key in keys],
        )
        if rows.ids:
            self._seen_id = max(self._seen_id, max(rows.ids))
        loaded: dict[PartitionKey, Partition] = {}
        for key in keys:
            chosen = [i for i, found in enumerate(rows.keys) if found == key.key]
            partition = Partition(key.dim)
            partition.put_many(
                [rows.item_ids[i] for i in chosen],
                [rows.ids[i] for i in chosen],
                rows.vectors[chosen],
            )
            loaded[key] = partition
        return loaded

    async def _catch_up(self, session: AsyncSession, collection: str) -> None:
        """Re-read the marked items of this collection, and (poll_new_rows) rows added since."""
        marked = self._marked.pop(collection, set())
        if (
            self.poll_new_rows
            and self._partitions
            and time.monotonic() - self._polled_at >= self.poll_interval_s
        ):
            self._polled_at = time.monotonic()
            newest = await newest_id(session)
            if newest > self._seen_id:
                added = await items_after(
                    session, after_id=self._seen_id, collections=sorted(self.collections)
                )
                for found_collection, item_id in added:
                    if found_collection == collection:
                        marked.add(item_id)
                    else:
                        self._mark(found_collection, [item_id])
                self._seen_id = newest
                self._own_ids = {i for i in self._own_ids if i > newest}
        if marked:
            await self._reread(session, collection, sorted(marked))

    async def _reread(self, session: AsyncSession, collection: str, item_ids: list[str]) -> None:
        found = await read_items(session, collection=collection, item_ids=item_ids)
        for item_id in item_ids:
            self._forget(collection, item_id)
        for rows in found:
            dim = rows.vectors.shape[1]
            for i, item_id in enumerate(rows.item_ids):
                key = PartitionKey(collection, rows.models[i], dim, rows.keys[i])
                self._put(key, item_id, rows.ids[i], rows.vectors[i])
                self._seen_id = max(self._seen_id, rows.ids[i])

    # --- changes made by other processes ---

    async def _listen(self) -> None:
        if self._feed is None or self._listener is not None:
            return
        # Subscribed before the first load: a change committed after that load is seen.
        self._subscription = await self._feed.subscribe()
        self._listener = asyncio.create_task(self._receive(), name="vectors:listen")

    async def _receive(self) -> None:
        assert self._feed is not None and self._subscription is not None
        while True:
            change = await self._subscription.next()
            if change is None:
                log.warning("vectors.memory_reset", reason="changes lost; reloading on demand")
                self.drop()
                self._subscription.close()
                self._subscription = await self._feed.subscribe()
            elif change.origin != self.origin and change.collection in self.collections:
                self._mark(change.collection, change.item_ids)

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
            self._listener = None
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        for split in list(self._splits):
            split.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
