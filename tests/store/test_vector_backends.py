"""Which vector backend runs where, and what is particular to each: the factory's choice,
sqlite-vec against NumPy, rows written without sqlite-vec, pgvector's HNSW index."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from eko.config import Settings
from eko.store.db import Database
from eko.store.vectors import VectorItem, VectorQuery, build_vector_index, query_vector
from eko.store.vectors.pg import PgVectorIndex, hnsw_index_name
from eko.store.vectors.sqlite import NumpyIndex, SqliteVecIndex
from tests.store.vector_helpers import fill, put, unit


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
        await put(numpy_only, session, collection="docs", item_id="i1", vector=vectors[10])

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
            session,
            VectorQuery("docs", "m", keys=("user:1",), vector=query_vector(query), k=5),
        )
        hits = await index.search(
            session, collection="docs", model="m", keys=["user:1"], query=query, k=5
        )
    assert hnsw_index_name(dim) in plan
    # The key filter removes half the candidates; iterative scan still yields k rows.
    assert len(hits) == 5
    assert hits[0].item_id == "i42"
    assert all(h.key == "user:1" for h in hits)


async def test_pgvector_connections_carry_the_search_settings(database: Database) -> None:
    """The factory's index gives each new connection its ef_search (and iterative scan) for
    the whole session: a rolled-back transaction keeps them, and a search with k above
    ef_search still raises it for its own transaction only."""
    if database.dialect != "postgresql":
        pytest.skip("PostgreSQL only")
    fresh = Database(database.url)  # no pooled connection yet: each one is opened now
    try:
        index = build_vector_index(fresh, Settings(pg_hnsw_ef_search=77))
        assert isinstance(index, PgVectorIndex)
        vectors = unit(np.random.default_rng(13), 30)
        await fill(fresh, index, vectors, keys=["k"])

        async def setting(name: str) -> str:
            async with fresh.session() as session:
                return str((await session.execute(text(f"SHOW {name}"))).scalar())

        async with fresh.sessions() as session:
            await session.execute(text("SELECT 1"))
            await session.rollback()
        assert await setting("hnsw.ef_search") == "77"
        async with fresh.session() as session:
            iterative = await index._has_iterative_scan(session)  # pgvector >= 0.8
        if iterative:
            assert await setting("hnsw.iterative_scan") == "relaxed_order"
        async with fresh.session() as session:
            hits = await index.search(
                session, collection="docs", model="m", keys=["k"], query=vectors[3], k=90
            )
            assert (await session.execute(text("SHOW hnsw.ef_search"))).scalar() == "90"
        assert len(hits) == 30 and hits[0].item_id == "i3"
        assert await setting("hnsw.ef_search") == "77"
    finally:
        await fresh.dispose()
