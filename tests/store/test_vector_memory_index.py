"""The in-memory vector index: exact top-k, in step with the database on write, delete and
rollback, and across two indexes (two processes) through the event bus, on both backends."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from eko.config import Settings
from eko.events.local import InProcessBus
from eko.events.vectors import EventChangeFeed
from eko.store.db import Database
from eko.store.vectors import (
    VectorHit,
    VectorIndex,
    VectorItem,
    build_memory_index,
    build_vector_index,
)
from eko.store.vectors.memory import MemoryVectorIndex
from eko.store.vectors.memory_read import skip_own
from eko.store.vectors.partition import Partition

DIM = 16
KEYS = ("shared", "user:1", "user:2")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def memory_index(
    database: Database, bus: InProcessBus | None = None, *, poll: bool = False
) -> MemoryVectorIndex:
    inner = build_vector_index(database, Settings())
    feed = EventChangeFeed(bus) if bus is not None else None
    return MemoryVectorIndex(inner, collections=frozenset({"guard"}), feed=feed, poll_new_rows=poll)


async def put(
    database: Database, index: VectorIndex, ids: list[str], vectors: np.ndarray, key: str
) -> None:
    async with database.session() as session:
        await index.upsert_many(
            session,
            collection="guard",
            model="m",
            items=[VectorItem(item_id, key, item_id) for item_id in ids],
            vectors=vectors,
        )


async def search(
    database: Database, index: VectorIndex, query: np.ndarray, *, k: int = 5
) -> list[VectorHit]:
    async with database.session() as session:
        return await index.search(
            session, collection="guard", model="m", keys=["shared", "user:1"], query=query, k=k
        )


def brute_force(
    vectors: np.ndarray, ids: list[str], keys: list[str], query: np.ndarray, k: int
) -> list[str]:
    scores = vectors @ (query / np.linalg.norm(query))
    order = sorted(
        (i for i in range(len(ids)) if keys[i] in ("shared", "user:1")), key=lambda i: -scores[i]
    )
    return [ids[i] for i in order[:k]]


async def test_top_k_equals_brute_force_and_the_database_backend(database: Database) -> None:
    rng = np.random.default_rng(3)
    vectors = unit(rng, 300)
    ids = [f"e{i}" for i in range(300)]
    keys = [KEYS[i % 3] for i in range(300)]
    index = memory_index(database)
    for key in KEYS:
        chosen = [i for i in range(300) if keys[i] == key]
        await put(database, index, [ids[i] for i in chosen], vectors[chosen], key)
    for query in unit(rng, 10):
        hits = await search(database, index, query, k=7)
        assert [hit.item_id for hit in hits] == brute_force(vectors, ids, keys, query, 7)
        assert all(hit.key in ("shared", "user:1") for hit in hits)
        from_db = await search(database, index.inner, query, k=7)
        assert [hit.item_id for hit in hits] == [hit.item_id for hit in from_db]
        for mine, theirs in zip(hits, from_db, strict=True):
            assert mine.score == pytest.approx(theirs.score, abs=1e-4)
            assert mine.embedding_id == theirs.embedding_id
    assert index.rows == 200  # only the searched keys were loaded


async def test_several_queries_in_one_pass_equal_one_search_each(database: Database) -> None:
    # The memory node asks for the question's neighbours and each sub-query's in one call.
    rng = np.random.default_rng(4)
    vectors = unit(rng, 120)
    ids = [f"e{i}" for i in range(120)]
    index = memory_index(database)
    for n, key in enumerate(KEYS):
        await put(database, index, ids[n * 40 : (n + 1) * 40], vectors[n * 40 : (n + 1) * 40], key)
    queries = list(unit(rng, 3))
    for backend in (index, index.inner):
        async with database.session() as session:
            each = await backend.search_each(
                session,
                collection="guard",
                model="m",
                keys=["shared", "user:1"],
                queries=queries,
                k=4,
            )
        alone = [await search(database, backend, query, k=4) for query in queries]
        assert [[h.item_id for h in hits] for hits in each] == [
            [h.item_id for h in hits] for hits in alone
        ]
        assert [[h.item_id for h in hits] for hits in each] == [
            brute_force(vectors, ids, [KEYS[i // 40] for i in range(120)], query, 4)
            for query in queries
        ]
        assert each[0] != each[1]


async def test_writes_deletes_and_rollbacks_stay_in_step(database: Database) -> None:
    rng = np.random.default_rng(4)
    index = memory_index(database)
    vectors = unit(rng, 3)
    await put(database, index, ["a", "b"], vectors[:2], "shared")
    assert (await search(database, index, vectors[0]))[0].item_id == "a"  # loaded now
    # A write after loading is searched at once, without reading the database again.
    await put(database, index, ["c"], vectors[2:3], "user:1")
    top = await search(database, index, vectors[2])
    assert top[0].item_id == "c" and top[0].score == pytest.approx(1.0, abs=1e-5)
    # Replacing an item moves it (new vector, new key).
    await put(database, index, ["a"], vectors[2:3], "user:2")
    assert "a" not in {hit.item_id for hit in await search(database, index, vectors[2])}
    # Deleted (as an obsolete guard entry's vector is): never found again.
    async with database.session() as session:
        assert await index.delete(session, collection="guard", item_ids=["c"]) == 1
    assert "c" not in {hit.item_id for hit in await search(database, index, vectors[2])}
    # A rolled-back write never reaches memory.
    with pytest.raises(RuntimeError):
        async with database.session() as session:
            await index.upsert(
                session,
                collection="guard",
                item_id="ghost",
                key="shared",
                text="ghost",
                vector=vectors[0],
                model="m",
            )
            raise RuntimeError("rolled back")
    assert "ghost" not in {hit.item_id for hit in await search(database, index, vectors[0])}


async def test_other_collections_go_to_the_database_backend(database: Database) -> None:
    index = memory_index(database)
    vector = unit(np.random.default_rng(5), 1)
    async with database.session() as session:
        await index.upsert(
            session, collection="docs", item_id="d", key="k", text="d", vector=vector, model="m"
        )
        hits = await index.search(
            session, collection="docs", model="m", keys=["k"], query=vector, k=1
        )
    assert [hit.item_id for hit in hits] == ["d"]
    assert index.rows == 0


async def test_a_write_in_one_process_reaches_the_other_through_the_bus(
    database: Database,
) -> None:
    """Two indexes on one bus stand for two workers: B sees A's add and A's delete."""
    rng = np.random.default_rng(6)
    bus = InProcessBus()
    a, b = memory_index(database, bus), memory_index(database, bus)
    vectors = unit(rng, 2)
    await put(database, a, ["x"], vectors[:1], "shared")
    assert [hit.item_id for hit in await search(database, b, vectors[0])] == ["x"]  # B loads
    await put(database, a, ["y"], vectors[1:2], "user:1")
    await asyncio.sleep(0.05)  # the event is delivered by a task
    assert (await search(database, b, vectors[1]))[0].item_id == "y"
    async with database.session() as session:
        await a.delete(session, collection="guard", item_ids=["x", "y"])
    await asyncio.sleep(0.05)
    assert await search(database, b, vectors[0]) == []
    # A's own events are not re-read by A (it applied them on commit).
    assert a._marked == {}
    await a.aclose()
    await b.aclose()


async def test_without_a_shared_bus_new_rows_are_polled(database: Database) -> None:
    """SQLite with a separate job worker: no bus between them; B polls for newer rows."""
    rng = np.random.default_rng(7)
    a, b = memory_index(database), memory_index(database, poll=True)
    vectors = unit(rng, 2)
    await put(database, a, ["x"], vectors[:1], "shared")
    assert len(await search(database, b, vectors[0])) == 1
    await put(database, a, ["y"], vectors[1:2], "shared")
    assert (await search(database, b, vectors[1]))[0].item_id == "y"


async def test_polls_at_most_once_per_interval(database: Database) -> None:
    """A message makes several searches: within the interval they share one poll, so another
    process's new row is found only once the interval has passed."""
    rng = np.random.default_rng(9)
    inner = build_vector_index(database, Settings())
    a = memory_index(database)
    b = MemoryVectorIndex(
        inner, collections=frozenset({"guard"}), poll_new_rows=True, poll_interval_s=0.3
    )
    vectors = unit(rng, 2)
    await put(database, a, ["x"], vectors[:1], "shared")
    assert len(await search(database, b, vectors[0])) == 1  # loaded
    assert len(await search(database, b, vectors[0])) == 1  # polled
    await put(database, a, ["y"], vectors[1:2], "shared")
    assert [hit.item_id for hit in await search(database, b, vectors[1])] == ["x"]
    await asyncio.sleep(0.35)
    assert (await search(database, b, vectors[1]))[0].item_id == "y"
    await a.aclose()
    await b.aclose()


async def test_polling_skips_only_its_own_rows(database: Database) -> None:
    """Both poll (no bus): each writes in turn, so its own rows come between the other's.
    What a process wrote is not read back (it is in memory already), but a row of the other
    written between two of its own is still found."""
    rng = np.random.default_rng(8)
    a, b = memory_index(database, poll=True), memory_index(database, poll=True)
    vectors = unit(rng, 6)
    await put(database, a, ["a0"], vectors[:1], "shared")
    await search(database, a, vectors[0])
    await search(database, b, vectors[0])  # both loaded
    for i, (writer, name) in enumerate([(a, "a1"), (b, "b2"), (a, "a3"), (a, "a4"), (b, "b5")]):
        await put(database, writer, [name], vectors[i + 1 : i + 2], "shared")
    for index in (a, b):
        for i, name in enumerate(["a0", "a1", "b2", "a3", "a4", "b5"]):
            assert (await search(database, index, vectors[i], k=1))[0].item_id == name
    assert skip_own(3, set(), [4, 5, 7]) == 5  # 6 is someone else's: the poll reads it


async def test_the_factory_wraps_only_when_collections_are_named(database: Database) -> None:
    inner = build_vector_index(database, Settings())
    assert (
        build_memory_index(
            inner, Settings(vector_memory_collections=[]), feed=None, shared_feed=False
        )
        is inner
    )
    wrapped = build_memory_index(inner, Settings(), feed=None, shared_feed=False)
    assert isinstance(wrapped, MemoryVectorIndex) and wrapped.poll_new_rows
    # Every collection a message searches is in memory by default.
    assert wrapped.collections >= {"guard", "turn", "memory", "summary", "doc_chunk", "topic"}


def test_partition_removal_keeps_rows_contiguous() -> None:
    rng = np.random.default_rng(8)
    vectors = unit(rng, 40)
    partition = Partition(DIM)
    partition.put_many([f"p{i}" for i in range(40)], list(range(40)), vectors)
    for i in range(0, 40, 2):
        assert partition.remove(f"p{i}")
    assert not partition.remove("p0") and len(partition) == 20
    for i in range(1, 40, 2):
        best = max(partition.top(vectors[i], 3))
        assert best[2] == f"p{i}" and best[1] == i
    assert partition.nbytes >= 20 * DIM * 4


def test_a_split_partition_finds_near_duplicates_and_stays_in_step() -> None:
    rng = np.random.default_rng(9)
    vectors = unit(rng, 3000)
    partition = Partition(DIM)
    partition.put_many([f"p{i}" for i in range(3000)], list(range(3000)), vectors)
    partition.split(probes=8)
    assert not partition.exact
    found = 0
    for i in range(0, 3000, 60):
        noisy = vectors[i] + rng.standard_normal(DIM).astype(np.float32) * 0.02
        best = max(partition.top(noisy / np.linalg.norm(noisy), 1))
        found += best[2] == f"p{i}"
    assert found >= 48  # of 50: a cell boundary may hide a few
    # Writes after the split land in cells too; removals keep rows and cells together.
    fresh = unit(rng, 5)
    partition.put_many([f"n{i}" for i in range(5)], list(range(5000, 5005)), fresh)
    for i in range(0, 3000, 3):
        partition.remove(f"p{i}")
    for i in range(5):
        assert max(partition.top(fresh[i], 1))[2] == f"n{i}"
    assert len(partition) == 2000 + 5
    for i in range(0, 3000, 3):  # removed rows are never found, even in their own cell
        assert f"p{i}" not in {found[2] for found in partition.top(vectors[i], 10)}
    # Replacing a row of a cell moves it to the tail, under its new vector.
    partition.put_many(["p1"], [1], fresh[:1])
    assert max(partition.top(fresh[0], 2))[2] in ("p1", "n0")
    assert "p1" not in {found[2] for found in partition.top(vectors[1], 3)}


async def test_large_partitions_are_loaded_split_and_searched(database: Database) -> None:
    rng = np.random.default_rng(10)
    vectors = unit(rng, 400)
    index = MemoryVectorIndex(
        build_vector_index(database, Settings()),
        collections=frozenset({"guard"}),
        approximate_above=100,
        probes=4,
    )
    await put(database, index, [f"e{i}" for i in range(400)], vectors, "shared")
    hits = await search(database, index, vectors[7], k=3)  # exact while it is split
    assert hits[0].item_id == "e7" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    await index.settled()
    hits = await search(database, index, vectors[8], k=3)
    assert hits[0].item_id == "e8" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    sizes = {key.key: (len(part), part.exact) for key, part in index._partitions.items()}
    assert sizes == {"shared": (400, False), "user:1": (0, True)}


async def test_invalidation_crosses_connections_through_postgres_notify(
    database: Database,
) -> None:
    """Two indexes with their own LISTEN connections, as two workers have: NOTIFY carries it."""
    if database.dialect != "postgresql":
        pytest.skip("PostgreSQL only")
    from eko.events.pg import PgNotifyBus

    rng = np.random.default_rng(11)
    buses = [PgNotifyBus(database), PgNotifyBus(database)]
    a, b = (
        MemoryVectorIndex(
            build_vector_index(database, Settings()),
            collections=frozenset({"guard"}),
            feed=EventChangeFeed(bus),
        )
        for bus in buses
    )
    vectors = unit(rng, 2)
    try:
        await put(database, a, ["x"], vectors[:1], "shared")
        assert [hit.item_id for hit in await search(database, b, vectors[0])] == ["x"]
        await put(database, a, ["y"], vectors[1:2], "shared")
        for _ in range(100):  # NOTIFY is asynchronous: wait for it (5 s at most)
            hits = await search(database, b, vectors[1])
            if hits[0].item_id == "y":
                break
            await asyncio.sleep(0.05)
        assert hits[0].item_id == "y"
        async with database.session() as session:
            await a.delete(session, collection="guard", item_ids=["x", "y"])
        for _ in range(100):
            if not await search(database, b, vectors[0]):
                break
            await asyncio.sleep(0.05)
        assert await search(database, b, vectors[0]) == []
    finally:
        for index in (a, b):
            await index.aclose()
        for bus in buses:
            await bus.aclose()


async def test_index_changes_are_not_sent_to_event_stream_clients() -> None:
    from typing import cast

    from eko.events.access import EventAccess
    from eko.events.stream import EventStream
    from eko.events.types import Event
    from eko.store.vectors.changes import VectorChange

    class SeesAll:
        async def may_see(self, event: Event) -> bool:
            return True

    bus = InProcessBus()
    stream = EventStream(await bus.subscribe(max_queue=8), cast(EventAccess, SeesAll()))
    await EventChangeFeed(bus).publish(VectorChange("guard", ("x",), "origin"))
    await bus.publish(Event("job.started", None, {}))
    shown = await stream.next(1.0)
    assert shown is not None and shown["type"] == "job.started"
