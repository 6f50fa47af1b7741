"""The vector index on every backend: SQLite (sqlite-vec and NumPy) and PostgreSQL (pgvector)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from sqlalchemy import func, select, text

from eko.config import Settings
from eko.embed import HashEmbedder
from eko.embed.base import Kind
from eko.store.db import Database
from eko.store.models import Embedding
from eko.store.vectors import (
    ReembedProgress,
    VectorIndex,
    VectorItem,
    build_vector_index,
)
from eko.store.vectors_pg import PgVectorIndex, hnsw_index_name
from eko.store.vectors_sqlite import NumpyIndex, SqliteVecIndex, vec_table

DIM = 32


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def indexes(database: Database) -> list[VectorIndex]:
    """Every backend that can run on this database."""
    if database.dialect == "postgresql":
        return [PgVectorIndex(ef_search=100)]
    found: list[VectorIndex] = [NumpyIndex()]
    if database.sqlite_vec_available:
        found.insert(0, SqliteVecIndex())
    return found


async def fill(
    database: Database,
    index: VectorIndex,
    vectors: np.ndarray,
    *,
    keys: Sequence[str],
    collection: str = "docs",
    model: str = "m",
) -> None:
    items = [VectorItem(f"i{i}", keys[i % len(keys)], f"text {i}") for i in range(len(vectors))]
    async with database.session() as session:
        await index.upsert_many(
            session, collection=collection, model=model, items=items, vectors=vectors
        )


async def test_factory_picks_the_backend(database: Database) -> None:
    index = build_vector_index(database, Settings())
    if database.dialect == "postgresql":
        assert isinstance(index, PgVectorIndex)
        return
    assert isinstance(index, SqliteVecIndex if database.sqlite_vec_available else NumpyIndex)
    assert isinstance(build_vector_index(database, Settings(vector_backend="numpy")), NumpyIndex)


async def test_factory_refuses_sqlite_vec_when_it_cannot_load(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    if database.dialect != "sqlite":
        pytest.skip("SQLite only")
    monkeypatch.setattr(database, "sqlite_vec_available", False)
    assert isinstance(build_vector_index(database, Settings()), NumpyIndex)
    with pytest.raises(RuntimeError, match="sqlite-vec"):
        build_vector_index(database, Settings(vector_backend="sqlite-vec"))


async def test_nearest_neighbours_match_brute_force(database: Database) -> None:
    rng = np.random.default_rng(1)
    vectors = unit(rng, 300)
    keys = ["user:0", "user:1", "user:2"]
    index = indexes(database)[0]
    await fill(database, index, vectors, keys=keys)
    key_of = np.array([keys[i % 3] for i in range(300)])
    for query in unit(rng, 10):
        for wanted in (["user:1"], ["user:0", "user:2"]):
            scores = vectors @ query
            scores[~np.isin(key_of, wanted)] = -np.inf
            expected = [f"i{i}" for i in np.argsort(-scores)[:5]]
            for backend in indexes(database):
                async with database.session() as session:
                    hits = await backend.search(
                        session, collection="docs", model="m", keys=wanted, query=query, k=5
                    )
                assert [h.item_id for h in hits] == expected, backend.backend
                expected_scores = [float(scores[int(h.item_id[1:])]) for h in hits]
                assert [h.score for h in hits] == pytest.approx(expected_scores, abs=1e-5)
                assert all(h.key in wanted for h in hits)


async def test_a_key_never_leaks_into_another_scope(database: Database) -> None:
    query = unit(np.random.default_rng(2), 1)[0]
    for index in indexes(database):
        async with database.session() as session:
            await index.upsert(
                session,
                collection="guard",
                item_id="secret",
                key="user:1",
                text="t",
                vector=query,
                model="m",
            )
            assert (
                await index.search(
                    session, collection="guard", model="m", keys=["user:2"], query=query, k=5
                )
                == []
            )
            assert (
                await index.search(
                    session, collection="guard", model="m", keys=[], query=query, k=5
                )
                == []
            )
            hits = await index.search(
                session, collection="guard", model="m", keys=["user:2", "user:1"], query=query, k=5
            )
        assert [(h.item_id, h.key) for h in hits] == [("secret", "user:1")]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_models_and_collections_never_mix(database: Database) -> None:
    rng = np.random.default_rng(3)
    query = unit(rng, 1)[0]
    index = indexes(database)[0]
    async with database.session() as session:
        for collection, item_id, model, vector in [
            ("docs", "a", "model-a", query),
            ("docs", "b", "model-b", query),
            ("memory", "c", "model-a", query),
            ("docs", "d", "model-a", unit(rng, 1, dim=DIM * 2)[0]),  # another space entirely
        ]:
            await index.upsert(
                session,
                collection=collection,
                item_id=item_id,
                key="k",
                text="t",
                vector=vector,
                model=model,
            )
    for backend in indexes(database):
        async with database.session() as session:
            hits = await backend.search(
                session, collection="docs", model="model-a", keys=["k"], query=query, k=10
            )
            wide = await backend.search(
                session,
                collection="docs",
                model="model-a",
                keys=["k"],
                query=unit(rng, 1, dim=DIM * 2)[0],
                k=10,
            )
        assert [h.item_id for h in hits] == ["a"]
        assert [h.item_id for h in wide] == ["d"]


async def test_upsert_replaces_the_row_and_its_index_entry(database: Database) -> None:
    rng = np.random.default_rng(4)
    first, second = unit(rng, 2)
    for index in indexes(database):
        collection = f"c-{index.backend}"
        async with database.session() as session:
            first_id = await index.upsert(
                session,
                collection=collection,
                item_id="x",
                key="user:1",
                text="old",
                vector=first,
                model="m",
            )
        async with database.session() as session:
            second_id = await index.upsert(
                session,
                collection=collection,
                item_id="x",
                key="user:2",
                text="new",
                vector=second,
                model="m",
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


async def test_min_score_and_k(database: Database) -> None:
    rng = np.random.default_rng(7)
    query = unit(rng, 1)[0]
    near = query + 0.2 * unit(rng, 1)[0]
    far = unit(rng, 1)[0]
    for index in indexes(database):
        collection = f"c-{index.backend}"
        async with database.session() as session:
            for item_id, vector in (("near", near), ("far", far), ("same", query)):
                await index.upsert(
                    session,
                    collection=collection,
                    item_id=item_id,
                    key="k",
                    text="t",
                    vector=vector,
                    model="m",
                )
            strict = await index.search(
                session,
                collection=collection,
                model="m",
                keys=["k"],
                query=query,
                k=5,
                min_score=0.9,
            )
            top1 = await index.search(
                session, collection=collection, model="m", keys=["k"], query=query, k=1
            )
        assert [h.item_id for h in strict] == ["same", "near"]
        assert all(h.score >= 0.9 for h in strict)
        assert [h.item_id for h in top1] == ["same"]


async def test_rolled_back_writes_leave_no_index_entry(database: Database) -> None:
    query = unit(np.random.default_rng(8), 1)[0]
    for index in indexes(database):
        collection = f"c-{index.backend}"
        with pytest.raises(RuntimeError):
            async with database.session() as session:
                await index.upsert(
                    session,
                    collection=collection,
                    item_id="x",
                    key="k",
                    text="t",
                    vector=query,
                    model="m",
                )
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
            await index.upsert(
                session,
                collection="c",
                item_id="x",
                key="k",
                text="t",
                vector=np.zeros(DIM, dtype=np.float32),
                model="m",
            )
        with pytest.raises(ValueError, match="items"):
            await index.upsert_many(
                session,
                collection="c",
                model="m",
                items=[VectorItem("x", "k", "t")],
                vectors=unit(np.random.default_rng(9), 2),
            )


async def test_sqlite_vec_and_numpy_agree(database: Database) -> None:
    if database.dialect != "sqlite" or not database.sqlite_vec_available:
        pytest.skip("needs SQLite with sqlite-vec")
    rng = np.random.default_rng(10)
    vectors = unit(rng, 500)
    await fill(database, SqliteVecIndex(), vectors, keys=["a", "b", "c", "d"])
    for query in unit(rng, 20):
        results = []
        for index in (SqliteVecIndex(), NumpyIndex()):
            async with database.session() as session:
                results.append(
                    await index.search(
                        session, collection="docs", model="m", keys=["b", "d"], query=query, k=7
                    )
                )
        vec_hits, numpy_hits = results
        assert [h.item_id for h in vec_hits] == [h.item_id for h in numpy_hits]
        assert [h.score for h in vec_hits] == pytest.approx([h.score for h in numpy_hits], abs=1e-5)


async def test_rows_written_without_sqlite_vec_are_indexed_again(database: Database) -> None:
    if database.dialect != "sqlite" or not database.sqlite_vec_available:
        pytest.skip("needs SQLite with sqlite-vec")
    rng = np.random.default_rng(11)
    vectors = unit(rng, 11)
    await fill(database, SqliteVecIndex(), vectors[:5], keys=["k"])
    # Meanwhile a Python without sqlite-vec wrote to the same file: 5 new rows, 1 deletion,
    # 1 replacement in place.
    numpy_only = NumpyIndex()
    items = [VectorItem(f"n{i}", "k", "t") for i in range(5)]
    async with database.session() as session:
        await numpy_only.upsert_many(
            session, collection="docs", model="m", items=items, vectors=vectors[5:10]
        )
        await numpy_only.delete(session, collection="docs", item_ids=["i0"])
        await numpy_only.upsert(
            session,
            collection="docs",
            item_id="i1",
            key="k",
            text="t",
            vector=vectors[10],
            model="m",
        )

    # A new process notices added and deleted rows by itself (cheap id comparison)...
    restarted = SqliteVecIndex()
    async with database.session() as session:
        hits = await restarted.search(
            session, collection="docs", model="m", keys=["k"], query=vectors[7], k=20
        )
    assert hits[0].item_id == "n2"
    assert {h.item_id for h in hits} == {"i1", "i2", "i3", "i4"} | {f"n{i}" for i in range(5)}
    # ...and a full sync also finds the row replaced in place.
    async with database.session() as session:
        assert await restarted.sync(session) == 1
        assert await restarted.sync(session) == 0
        hits = await restarted.search(
            session, collection="docs", model="m", keys=["k"], query=vectors[10], k=1
        )
    assert hits[0].item_id == "i1"
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


async def test_pgvector_search_uses_the_hnsw_index(database: Database) -> None:
    if database.dialect != "postgresql":
        pytest.skip("PostgreSQL only")
    # A dimension of its own so that this test creates (and bulk-builds) its index; 5,000 rows
    # is where the planner starts to prefer HNSW over a scan-and-sort.
    dim, n = 48, 5000
    rng = np.random.default_rng(12)
    vectors = unit(rng, n, dim=dim)
    index = PgVectorIndex(ef_search=100)
    await fill(database, index, vectors, keys=["user:1", "user:2"])
    async with database.session() as session:
        await session.execute(text("ANALYZE embeddings"))
    query = vectors[42]
    async with database.session() as session:
        plan = await index.explain(
            session, collection="docs", model="m", keys=["user:1"], query=query, k=5
        )
        hits = await index.search(
            session, collection="docs", model="m", keys=["user:1"], query=query, k=5
        )
    assert hnsw_index_name(dim) in plan
    # The key filter removes half the candidates; iterative scan still yields k rows.
    assert len(hits) == 5
    assert hits[0].item_id == "i42"
    assert all(h.key == "user:1" for h in hits)


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
