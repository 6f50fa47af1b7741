"""The vector index on every backend (SQLite: sqlite-vec and NumPy; PostgreSQL: pgvector):
writes (upsert, upsert_many, delete, rollback, refused vectors) and re-embedding with a new
model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sqlalchemy import func, select, text

from eko.embed import HashEmbedder
from eko.embed.base import Kind
from eko.store.db import Database
from eko.store.models import Embedding
from eko.store.vectors import ReembedProgress, VectorItem
from eko.store.vectors.sqlite import vec_table
from tests.store.vector_helpers import DIM, fill, indexes, put, unit


async def test_upsert_replaces_the_row_and_its_index_entry(database: Database) -> None:
    rng = np.random.default_rng(4)
    first, second = unit(rng, 2)
    for index in indexes(database):
        collection = f"c-{index.backend}"
        async with database.session() as session:
            first_id = await put(
                index,
                session,
                collection=collection,
                item_id="x",
                key="user:1",
                text="old",
                vector=first,
            )
        async with database.session() as session:
            second_id = await put(
                index,
                session,
                collection=collection,
                item_id="x",
                key="user:2",
                text="new",
                vector=second,
            )
            rows = (
                await session.execute(
                    select(Embedding.key, Embedding.text).where(Embedding.collection == collection)
                )
            ).all()
            old_scope = await index.search(
                session, collection=collection, model="m", keys=["user:1"], query=first, k=5
            )
            new_scope = await index.search(
                session, collection=collection, model="m", keys=["user:2"], query=second, k=5
            )
        assert second_id == first_id
        assert [tuple(row) for row in rows] == [("user:2", "new")]
        assert old_scope == []
        assert [(h.item_id, h.embedding_id) for h in new_scope] == [("x", first_id)]
        assert new_scope[0].score == pytest.approx(1.0, abs=1e-5)


async def test_upsert_many_keeps_the_last_duplicate_and_returns_ids_in_order(
    database: Database,
) -> None:
    rng = np.random.default_rng(5)
    vectors = unit(rng, 3)
    index = indexes(database)[0]
    items = [VectorItem("a", "k", "1"), VectorItem("b", "k", "2"), VectorItem("a", "k", "3")]
    async with database.session() as session:
        ids = await index.upsert_many(
            session, collection="docs", model="m", items=items, vectors=vectors
        )
        stored = dict((await session.execute(select(Embedding.item_id, Embedding.text))).all())
        hits = await index.search(
            session, collection="docs", model="m", keys=["k"], query=vectors[2], k=1
        )
    assert ids[0] == ids[2] != ids[1]
    assert stored == {"a": "3", "b": "2"}
    assert hits[0].item_id == "a"
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_delete_removes_rows_from_the_index(database: Database) -> None:
    rng = np.random.default_rng(6)
    vectors = unit(rng, 20)
    for index in indexes(database):
        collection = f"c-{index.backend}"
        await fill(database, index, vectors, keys=["k"], collection=collection)
        async with database.session() as session:
            deleted = await index.delete(
                session, collection=collection, item_ids=["i0", "i1", "i1", "missing"]
            )
        async with database.session() as session:
            hits = await index.search(
                session, collection=collection, model="m", keys=["k"], query=vectors[0], k=20
            )
        assert deleted == 2
        assert "i0" not in {h.item_id for h in hits}
        assert len(hits) == 18
    if database.dialect == "sqlite" and database.sqlite_vec_available:
        async with database.session() as session:
            left = (await session.execute(text(f"SELECT count(*) FROM {vec_table(DIM)}"))).scalar()
            rows = (await session.execute(select(func.count()).select_from(Embedding))).scalar()
        # The NumpyIndex pass wrote rows without sqlite-vec's table: only its own rows differ.
        assert left == 18
        assert rows == 36


async def test_rolled_back_writes_leave_no_index_entry(database: Database) -> None:
    query = unit(np.random.default_rng(8), 1)[0]
    for index in indexes(database):
        collection = f"c-{index.backend}"
        with pytest.raises(RuntimeError):
            async with database.session() as session:
                await put(index, session, collection=collection, item_id="x", vector=query)
                raise RuntimeError("abort")
        async with database.session() as session:
            assert (
                await index.search(
                    session, collection=collection, model="m", keys=["k"], query=query, k=5
                )
                == []
            )


async def test_bad_vectors_are_refused(database: Database) -> None:
    index = indexes(database)[0]
    async with database.session() as session:
        with pytest.raises(ValueError, match="zero"):
            await put(
                index, session, collection="c", item_id="x", vector=np.zeros(DIM, dtype=np.float32)
            )
        with pytest.raises(ValueError, match="items"):
            await index.upsert_many(
                session,
                collection="c",
                model="m",
                items=[VectorItem("x", "k", "t")],
                vectors=unit(np.random.default_rng(9), 2),
            )


class RecordingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=16)
        self.kinds: list[tuple[Kind, int]] = []

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.kinds.append((kind, len(texts)))
        return await super().embed(texts, kind=kind)


async def test_reembed_moves_every_row_to_the_new_model(database: Database) -> None:
    rng = np.random.default_rng(13)
    index = indexes(database)[0]
    await fill(database, index, unit(rng, 5, dim=8), keys=["k"], collection="docs", model="old")
    await fill(database, index, unit(rng, 3, dim=8), keys=["k"], collection="guard", model="old")
    embedder = RecordingEmbedder()
    async with database.session() as session:
        assert await index.count_other_models(session, model=embedder.name) == {"old": 8}

    progress = [
        step
        async for step in index.reembed(
            database.session,
            embedder=embedder,
            kind_of=lambda collection: "query" if collection == "guard" else "passage",
            batch_size=3,
        )
    ]

    assert progress[-1] == ReembedProgress(done=8, total=8)
    assert [p.done for p in progress] == [3, 6, 8]
    assert sorted(kind for kind, _ in embedder.kinds) == ["passage", "passage", "query", "query"]
    async with database.session() as session:
        assert await index.count_other_models(session, model=embedder.name) == {}
        query = (await embedder.embed(["text 2"]))[0]
        hits = await index.search(
            session, collection="docs", model=embedder.name, keys=["k"], query=query, k=1
        )
    assert hits[0].item_id == "i2"
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
