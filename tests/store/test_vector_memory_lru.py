"""The in-memory vector index under a memory cap: past it, a search drops the least recently
searched partitions, re-read from the database (with later writes) when searched again, never
while a search uses them; cap 0 keeps everything. Both backends."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.config import Settings
from eko.store.db import Database
from eko.store.vectors import VectorHit, VectorItem, build_memory_index, build_vector_index
from eko.store.vectors.lru import PartitionLru
from eko.store.vectors.memory import MemoryVectorIndex
from eko.store.vectors.partition import Partition, PartitionKey

DIM = 16
ROWS = 10  # per room: one partition of INITIAL_ROWS allocated rows each
ROOMS = ("room:A", "room:B", "room:C", "room:D", "room:E")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def room_bytes() -> int:
    partition = Partition(DIM)
    partition.put_many([f"i{i}" for i in range(ROWS)], list(range(ROWS)), unit(rng(0), ROWS))
    return partition.nbytes


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def key(room: str) -> PartitionKey:
    return PartitionKey("turn", "m", DIM, room)


def capped(database: Database, max_bytes: int, *, split_above: int = 0) -> MemoryVectorIndex:
    return MemoryVectorIndex(
        build_vector_index(database, Settings()),
        collections=frozenset({"turn"}),
        max_bytes=max_bytes,
        approximate_above=split_above,
        probes=2,
    )


async def put(
    database: Database, index: MemoryVectorIndex, room: str, ids: list[str], vectors: np.ndarray
) -> None:
    async with database.session() as session:
        await index.upsert_many(
            session,
            collection="turn",
            model="m",
            items=[VectorItem(item_id, room, item_id) for item_id in ids],
            vectors=vectors,
        )


async def search(
    database: Database, index: MemoryVectorIndex, rooms: list[str], query: np.ndarray, k: int = 3
) -> list[VectorHit]:
    async with database.session() as session:
        return await index.search(
            session, collection="turn", model="m", keys=rooms, query=query, k=k
        )


async def fill(
    database: Database, index: MemoryVectorIndex, rooms: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """ROWS items per room ("<room>-<i>"), written through the index."""
    vectors = {room: unit(rng(i + 1), ROWS) for i, room in enumerate(rooms)}
    for room in rooms:
        await put(database, index, room, [f"{room}-{i}" for i in range(ROWS)], vectors[room])
    return vectors


def loaded(index: MemoryVectorIndex) -> set[str]:
    return {found.key for found in index.loaded("turn")}


def consistent(index: MemoryVectorIndex) -> None:
    """The bookkeeping matches what is held, and no item points at a dropped partition."""
    assert index._lru.nbytes == index.nbytes
    assert set(index._lru.order()) == set(index._partitions)
    assert all(found in index._partitions for found in index._where.values())


async def test_the_least_recently_searched_room_is_dropped_and_reloaded_with_new_writes(
    database: Database,
) -> None:
    cap = 2 * room_bytes() + room_bytes() // 2  # two rooms fit, not three
    index = capped(database, cap)
    vectors = await fill(database, index, ROOMS[:3])
    a, b, c = ROOMS[:3]
    for room in (a, b):
        assert (await search(database, index, [room], vectors[room][0]))[0].item_id == room + "-0"
    assert loaded(index) == {a, b}
    assert (await search(database, index, [c], vectors[c][1]))[0].item_id == c + "-1"
    assert loaded(index) == {b, c}  # A was searched least recently
    assert index.nbytes <= cap
    consistent(index)
    # Written while A is dropped: the commit does not bring back a partial A.
    fresh = unit(rng(99), 1)
    await put(database, index, a, ["A-new"], fresh)
    assert loaded(index) == {b, c}
    # A is read again from the database, whole and with the new row; B goes now.
    hits = await search(database, index, [a], fresh[0], k=ROWS + 5)
    assert hits[0].item_id == "A-new" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert {hit.item_id for hit in hits} == {f"{a}-{i}" for i in range(ROWS)} | {"A-new"}
    assert loaded(index) == {a, c}
    consistent(index)
    # Recency, not load order: C searched again, so D's load drops A, not C.
    vectors |= await fill(database, index, (ROOMS[3],))
    await search(database, index, [c], vectors[c][2])
    await search(database, index, [ROOMS[3]], vectors[ROOMS[3]][0])
    assert loaded(index) == {c, ROOMS[3]}
    consistent(index)


async def test_a_write_pending_while_its_partition_is_dropped_is_found_after_commit(
    database: Database,
) -> None:
    index = capped(database, 1)  # every load drops all the partitions not searched now
    vectors = await fill(database, index, ROOMS[:2])
    a, b = ROOMS[:2]
    await search(database, index, [a], vectors[a][0])
    moved = unit(rng(50), 2)
    async with database.session() as session:
        # Uncommitted: a new item in A and an item of A replaced (moved to B's room).
        await index.upsert_many(
            session,
            collection="turn",
            model="m",
            items=[VectorItem("pending", a, "p"), VectorItem(f"{a}-3", b, "moved")],
            vectors=moved,
        )
        async with database.session() as other:
            await index.search(other, collection="turn", model="m", keys=[b], query=moved[0], k=1)
        assert loaded(index) == {b}
    assert loaded(index) == {b}  # the commit touched only B, which is loaded
    consistent(index)
    hits_b = await search(database, index, [b], moved[1], k=1)
    assert hits_b[0].item_id == f"{a}-3" and hits_b[0].key == b
    hits_a = await search(database, index, [a], moved[0], k=ROWS + 5)
    assert hits_a[0].item_id == "pending"
    assert f"{a}-3" not in {hit.item_id for hit in hits_a}
    assert len(hits_a) == ROWS  # ten rows, one moved out, one added
    assert loaded(index) == {a}


async def test_the_partitions_a_search_uses_are_kept_even_over_the_cap(
    database: Database,
) -> None:
    index = capped(database, 1)
    vectors = await fill(database, index, ROOMS[:3])
    a, b, c = ROOMS[:3]
    assert (await search(database, index, [a], vectors[a][4]))[0].item_id == f"{a}-4"
    assert loaded(index) == {a}  # alone over the cap, but in use
    hits = await search(database, index, [a, b], vectors[b][5], k=ROWS * 2)
    assert hits[0].item_id == f"{b}-5" and len(hits) == 2 * ROWS
    assert loaded(index) == {a, b}
    await search(database, index, [c], vectors[c][0])
    assert loaded(index) == {c}
    consistent(index)


async def test_a_concurrent_load_does_not_drop_what_another_search_waits_on(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = capped(database, 1)
    vectors = await fill(database, index, ROOMS[:3])
    a, b, c = ROOMS[:3]
    await search(database, index, [a], vectors[a][0])
    reads: list[list[str]] = []
    read = index._read

    async def spy(session: AsyncSession, keys: list[PartitionKey]) -> dict[PartitionKey, Partition]:
        reads.append([found.key for found in keys])
        return await read(session, keys)

    monkeypatch.setattr(index, "_read", spy)
    # C's search loads first; the other search, holding A, waits for the load lock meanwhile.
    hits_c, hits_ab = await asyncio.gather(
        search(database, index, [c], vectors[c][1]),
        search(database, index, [a, b], vectors[a][2], k=2 * ROWS),
    )
    assert hits_c[0].item_id == f"{c}-1"
    assert hits_ab[0].item_id == f"{a}-2" and len(hits_ab) == 2 * ROWS
    assert reads == [[c], [b]]  # A was kept for the waiting search, not dropped and re-read
    assert loaded(index) == {a, b}
    consistent(index)


async def test_a_partition_dropped_during_its_background_split_stays_dropped(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = capped(database, 1, split_above=ROWS // 2)
    vectors = await fill(database, index, ROOMS[:2])
    a, b = ROOMS[:2]
    release = threading.Event()
    split = Partition.split

    def held_split(self: Partition, *, probes: int, seed: int = 0) -> None:
        release.wait(timeout=10)
        split(self, probes=probes, seed=seed)

    monkeypatch.setattr(Partition, "split", held_split)
    await search(database, index, [a], vectors[a][0])  # starts a split of A, held
    await search(database, index, [b], vectors[b][0])  # drops A meanwhile
    release.set()
    await index.settled()
    assert loaded(index) == {b}  # the finished split did not put A back
    consistent(index)
    assert (await search(database, index, [a], vectors[a][6]))[0].item_id == f"{a}-6"


async def test_cap_zero_never_drops(database: Database) -> None:
    index = capped(database, 0, split_above=ROWS // 2)
    vectors = await fill(database, index, ROOMS)
    for room in ROOMS:
        await search(database, index, [room], vectors[room][0])
    await index.settled()  # split copies replaced the partitions: their sizes are counted
    assert loaded(index) == set(ROOMS)
    assert not any(part.exact for part in index._partitions.values())
    consistent(index)


async def test_the_setting_reaches_the_index(database: Database) -> None:
    inner = build_vector_index(database, Settings())
    index = build_memory_index(inner, Settings(vector_memory_max_mb=3), feed=None, shared_feed=True)
    assert isinstance(index, MemoryVectorIndex) and index._lru.max_bytes == 3 * 1024 * 1024
    assert Settings().vector_memory_max_mb == 512
    with pytest.raises(ValidationError):
        Settings(vector_memory_max_mb=-1)


def test_victims_are_least_recent_first_and_never_pinned() -> None:
    lru = PartitionLru(250)
    for room in ROOMS[:4]:
        lru.record(key(room), 100)
    assert lru.nbytes == 400
    lru.touch([key(ROOMS[0])])  # order now B, C, D, A
    assert lru.victims() == [key(ROOMS[1]), key(ROOMS[2])]
    with lru.using([key(ROOMS[1])]):
        assert lru.victims() == [key(ROOMS[2]), key(ROOMS[3])]
        with lru.using([key(room) for room in ROOMS[:4]]):
            assert lru.victims() == []  # all in use: over the cap, nothing to drop
        # A, B, C, D now the most recent in that order; B still in use by the outer search.
        assert lru.victims() == [key(ROOMS[0]), key(ROOMS[2])]
    assert not lru._pins  # all unpinned again
    assert lru.victims() == [key(ROOMS[0]), key(ROOMS[1])]
    lru.record(key(ROOMS[2]), 10)  # grown or shrunk: the total follows
    lru.forget(key(ROOMS[3]))
    assert lru.nbytes == 210 and lru.victims() == []
    assert PartitionLru(0).victims() == []
    with pytest.raises(ValueError):
        PartitionLru(-1)
