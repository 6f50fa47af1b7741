"""Concurrent catch-ups of one room's turns: no error, each turn indexed once (both backends).

Concurrent requests in one room each catch up the turns their recall can return. They used to
write the same vectors at once and fail: on SQLite the vec0 row of a turn another request had
just indexed (a duplicate rowid), on PostgreSQL the first writers of a dimension deadlocked
building its HNSW index. The failure cost those replies their memory section.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from eko.embed.base import Kind
from eko.embed.hashing import HashEmbedder
from eko.memory.turn_index import COLLECTION, TurnIndex
from eko.memory.turn_indexer import TurnIndexer
from eko.store.locks import KeyedLocks
from eko.store.models import Embedding, Room
from eko.store.vectors.sqlite import SqliteVecIndex, vec_table

from .conftest import MemoryKit

CONCURRENT = 10
EXCHANGES = 20


class CountingEmbedder(HashEmbedder):
    """The hash embedder, counting the texts it embeds and yielding to the event loop (as a
    model call would) so concurrent catch-ups interleave."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.texts = 0

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.texts += len(texts)
        await asyncio.sleep(0.01)
        return await super().embed(texts, kind=kind)


async def _history(kit: MemoryKit) -> Room:
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    for i in range(EXCHANGES):
        await kit.say(room, f"Message number {i} about topic {i}.", user=alice)
        await kit.say(room, f"Reply {i}.", role="assistant")
    return room


async def _catch_up_at_once(
    kit: MemoryKit, indexes: Sequence[TurnIndexer], room: Room
) -> list[int]:
    async def one(index: TurnIndexer) -> int:
        async with kit.database.session() as session:
            return await index.catch_up(session, room_id=room.id, limit=64)

    return list(await asyncio.gather(*(one(index) for index in indexes)))


async def _assert_indexed_once(kit: MemoryKit, room: Room, embedder: HashEmbedder) -> None:
    async with kit.database.session() as session:
        per_item = (
            await session.execute(
                select(Embedding.item_id, func.count())
                .where(Embedding.collection == COLLECTION)
                .group_by(Embedding.item_id)
            )
        ).all()
        assert len(per_item) == 2 * EXCHANGES
        assert {count for _, count in per_item} == {1}
        if isinstance(kit.vectors, SqliteVecIndex):
            # The side index holds each row once too (rowid = embeddings.id).
            vec_rows = await session.scalar(
                text(f"SELECT count(*) FROM {vec_table(embedder.dim)} WHERE collection = :c"),
                {"c": COLLECTION},
            )
            assert vec_rows == 2 * EXCHANGES
        # The index answers: message 7 (seq 15) is found by its words, or the reply after it
        # (whose vector holds them too).
        index = TurnIndex(vectors=kit.vectors, embedder=embedder, assistant_name="Eko")
        query = (await embedder.embed(["Alice: Message number 7 about topic 7."]))[0]
        [hits] = await index.search(session, room_id=room.id, vectors=[query], before_seq=None, k=1)
        assert [hit.seq for hit in hits] in ([15], [16])


async def test_concurrent_catch_ups_in_one_process_index_each_turn_once(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # A dimension of its own: on PostgreSQL, these writes are its first (the index is built).
    embedder = CountingEmbedder(dim=72)
    kit = kit_factory(embedder=embedder)
    room = await _history(kit)
    indexes = [kit.memory.context.indexer] * CONCURRENT

    indexed = await _catch_up_at_once(kit, indexes, room)

    assert sorted(indexed) == [0] * (CONCURRENT - 1) + [2 * EXCHANGES]
    assert embedder.texts == 2 * EXCHANGES  # the others waited and found the turns indexed
    await _assert_indexed_once(kit, room, embedder)


async def test_concurrent_catch_ups_from_several_processes_write_each_turn_once(
    kit_factory: Callable[..., MemoryKit],
) -> None:
    # One TurnIndexer per "process" (its own locks): nothing keeps them from writing the same
    # turns at the same time but the database.
    embedder = CountingEmbedder(dim=88)
    kit = kit_factory(embedder=embedder)
    room = await _history(kit)
    indexes = [
        TurnIndexer(
            TurnIndex(vectors=kit.vectors, embedder=embedder, assistant_name="Eko"),
            locks=KeyedLocks(),
        )
        for _ in range(CONCURRENT)
    ]

    indexed = await _catch_up_at_once(kit, indexes, room)

    assert all(count in (0, 2 * EXCHANGES) for count in indexed)
    await _assert_indexed_once(kit, room, embedder)


async def test_a_catch_up_the_database_refuses_still_leaves_the_recall(
    kit_factory: Callable[..., MemoryKit], monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = kit_factory(recent_turns=2)
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "On Sundays I do watercolours by the lake.", user=alice)
    await kit.say(room, "Lovely.", role="assistant")
    for i in range(4):
        await kit.say(room, f"Small talk number {i}.", user=alice)
        await kit.say(room, f"Reply {i}.", role="assistant")
    current = await kit.say(room, "Where do I do my watercolours?", user=alice)

    async def refused(*_args: object, **_kwargs: object) -> list[int]:
        raise IntegrityError("INSERT INTO embeddings ...", {}, Exception("duplicate key"))

    monkeypatch.setattr(kit.vectors, "upsert_many", refused)
    built = await kit.memory.context.build(
        room=room, user=alice, query=current.content, before_seq=current.seq
    )

    assert "duplicate key" in built.stats["turn_index_error"]
    assert built.stats["turns_indexed"] == 0
    assert "watercolours by the lake" in built.text  # found by its words all the same
