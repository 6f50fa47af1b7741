"""The vector index on every backend (SQLite: sqlite-vec and NumPy; PostgreSQL: pgvector):
what a search returns (exact top-k, scopes, models and collections apart, min_score and k)."""

from __future__ import annotations

import numpy as np
import pytest

from eko.store.db import Database
from tests.store.vector_helpers import DIM, fill, indexes, put, unit


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
            await put(
                index, session, collection="guard", item_id="secret", key="user:1", vector=query
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
            await put(
                index, session, collection=collection, item_id=item_id, vector=vector, model=model
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


async def test_min_score_and_k(database: Database) -> None:
    rng = np.random.default_rng(7)
    query = unit(rng, 1)[0]
    near = query + 0.2 * unit(rng, 1)[0]
    far = unit(rng, 1)[0]
    for index in indexes(database):
        collection = f"c-{index.backend}"
        async with database.session() as session:
            for item_id, vector in (("near", near), ("far", far), ("same", query)):
                await put(index, session, collection=collection, item_id=item_id, vector=vector)
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


async def test_sqlite_vec_search_after_the_table_creation_rolled_back(database: Database) -> None:
    """The vec0 table is looked up once per process; one created in a transaction that then
    rolled back is found gone by the next search, which finds nothing instead of failing."""
    if database.dialect != "sqlite" or not database.sqlite_vec_available:
        pytest.skip("sqlite-vec only")
    from sqlalchemy import text

    from eko.store.vectors.sqlite import SqliteVecIndex, vec_table

    index = SqliteVecIndex()
    query = unit(np.random.default_rng(5), 1)[0]
    async with database.sessions() as session:
        # A write first: the driver opens the transaction before it, so the table's creation
        # below is part of it (SQLite's DDL is transactional).
        await session.execute(text("DELETE FROM embeddings WHERE id < 0"))
        await put(index, session, collection="docs", item_id="a", vector=query)
        hits = await index.search(
            session, collection="docs", model="m", keys=["k"], query=query, k=3
        )
        assert [h.item_id for h in hits] == ["a"]
        await session.rollback()
    async with database.session() as session:
        exists = await session.execute(
            text("SELECT 1 FROM sqlite_master WHERE name = :name"), {"name": vec_table(DIM)}
        )
        assert exists.first() is None
        for _ in range(2):
            hits = await index.search(
                session, collection="docs", model="m", keys=["k"], query=query, k=3
            )
            assert hits == []
    async with database.session() as session:
        await put(index, session, collection="docs", item_id="b", vector=query)
    async with database.session() as session:
        hits = await index.search(
            session, collection="docs", model="m", keys=["k"], query=query, k=3
        )
    assert [h.item_id for h in hits] == ["b"]
