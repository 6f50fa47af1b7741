"""PostgreSQL vector search: pgvector with one partial HNSW index per dimension.

The `embeddings.vector` column is an untyped `vector` (any dimension), which HNSW cannot index;
so each dimension d gets an expression index over `vector::vector(d)` restricted to `dim = d`,
created lazily right after the first vectors of that dimension are written (a graph built over
rows already there builds faster than one grown row by row) by a write that has the table to
itself. Queries order by the very same
expression so the planner can use the index. Above 2,000 dimensions (pgvector's HNSW limit for
`vector`) the index is built on a `halfvec` cast, good up to 4,000.
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from eko.store.vectors.base import VectorHit, VectorIndex, VectorQuery, hits_from_rows
from eko.store.vectors.rows import vector_literal

log = structlog.get_logger("eko.store")

HNSW_MAX_DIM = 2000
HALFVEC_MAX_DIM = 4000
# SQLSTATE of a NOWAIT lock that another transaction holds.
LOCK_NOT_AVAILABLE = "55P03"


_VERSION_SQL = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
# Connection info: the (ef_search, iterative scan) a connection was given for its session.
_TUNED = "eko_hnsw_session_settings"


def _version(version: Any) -> tuple[int, ...]:
    return tuple(int(p) for p in str(version or "0").split(".")[:2] if p.isdigit())


def hnsw_index_name(dim: int) -> str:
    return f"ix_embeddings_hnsw_{int(dim)}"


def _cast_type(dim: int) -> str:
    # halfvec only where it makes an index possible; beyond 4,000 search is an exact scan.
    return "halfvec" if HNSW_MAX_DIM < dim <= HALFVEC_MAX_DIM else "vector"


def vector_expression(dim: int) -> str:
    """The indexed expression for dimension `dim`; queries must repeat it verbatim."""
    return f"(vector::{_cast_type(dim)}({int(dim)}))"


class PgVectorIndex(VectorIndex):
    backend = "pgvector"
    exact = False  # HNSW is approximate: recall depends on ef_search

    def __init__(self, *, ef_search: int = 100) -> None:
        self.ef_search = ef_search
        self._indexed_dims: set[int] = set()
        self._iterative_scan: bool | None = None

    async def search_query(self, session: AsyncSession, query: VectorQuery) -> list[VectorHit]:
        await self._tune(session, query.k)
        result = await session.execute(text(_search_sql(query.dim)), _search_params(query))
        # relaxed_order may return rows slightly out of order: hits_from_rows sorts them.
        return hits_from_rows(list(result.all()), query.min_score)

    async def explain(self, session: AsyncSession, query: VectorQuery) -> str:
        """The plan of a search (for `eko doctor` and tests: is the HNSW index used?)."""
        await self._tune(session, query.k)
        result = await session.execute(
            text("EXPLAIN " + _search_sql(query.dim)), _search_params(query)
        )
        return "\n".join(str(line) for line in result.scalars())

    def tune_connections(self, engine: AsyncEngine) -> None:
        """Give each connection the engine opens from now on this index's settings for its
        whole session (set at connect, outside any transaction, so no rollback undoes them):
        a search then needs no set_config round trip of its own, unless k > ef_search."""
        if not event.contains(engine.sync_engine, "connect", self._on_connect):
            event.listen(engine.sync_engine, "connect", self._on_connect)

    def _on_connect(self, dbapi_connection: Any, record: Any) -> None:
        async def configure(connection: Any) -> tuple[int, bool]:  # asyncpg's own
            version = await connection.fetchval(_VERSION_SQL)
            iterative = version is not None and _version(version) >= (0, 8)
            await connection.execute(f"SET hnsw.ef_search = {int(self.ef_search)}")
            if iterative:
                await connection.execute("SET hnsw.iterative_scan = relaxed_order")
            return self.ef_search, iterative

        record.info[_TUNED] = dbapi_connection.run_async(configure)

    async def _tune(self, session: AsyncSession, k: int) -> None:
        # Transaction-local settings (set_config(..., true) = SET LOCAL), in one round trip,
        # unless the connection has them for its session already (tune_connections).
        # ef_search below k would cap the result below k.
        ef_search = max(self.ef_search, k)
        iterative = await self._has_iterative_scan(session)
        if (await session.connection()).info.get(_TUNED) == (ef_search, iterative):
            return
        if iterative:
            # pgvector ≥ 0.8: keep walking the graph until k rows pass the filters, instead of
            # filtering ef_search candidates and returning fewer than k.
            await session.execute(
                text(
                    "SELECT set_config('hnsw.ef_search', :ef, true), "
                    "set_config('hnsw.iterative_scan', 'relaxed_order', true)"
                ),
                {"ef": str(ef_search)},
            )
        else:
            await session.execute(
                text("SELECT set_config('hnsw.ef_search', :ef, true)"), {"ef": str(ef_search)}
            )

    async def _has_iterative_scan(self, session: AsyncSession) -> bool:
        if self._iterative_scan is None:
            version = (await session.execute(text(_VERSION_SQL))).scalar()
            self._iterative_scan = _version(version) >= (0, 8)
            if not self._iterative_scan:
                log.warning(
                    "pgvector.old",
                    version=version,
                    effect="filtered searches may return fewer than k rows; upgrade to ≥ 0.8",
                )
        return self._iterative_scan

    async def _finish_write(self, session: AsyncSession, dim: int) -> None:
        if dim in self._indexed_dims:
            return
        if dim > HALFVEC_MAX_DIM:
            log.warning("pgvector.no_index", dim=dim, effect="exact scans for this dimension")
            self._indexed_dims.add(dim)
            return
        name = hnsw_index_name(dim)
        # Look first: CREATE INDEX IF NOT EXISTS would still take a SHARE lock on the table at
        # every write, serializing writers and risking deadlocks with their row locks.
        exists = await session.execute(
            text("SELECT 1 FROM pg_indexes WHERE tablename = 'embeddings' AND indexname = :n"),
            {"n": name},
        )
        if exists.first() is not None:
            self._indexed_dims.add(dim)
            return
        ops = f"{_cast_type(dim)}_cosine_ops"
        # In the caller's transaction: it commits with the first rows of this dimension. Not
        # cached here, as that transaction may still roll back; the next write looks again.
        # Only while no other transaction writes the table: CREATE INDEX takes a SHARE lock,
        # which waits for every other writer's ROW EXCLUSIVE, and two first writers of a
        # dimension waiting for each other were a deadlock (concurrent requests catching up
        # one room's turns on a new database). When another is writing, the index is left to
        # a later write; searches scan exactly meanwhile.
        started = time.perf_counter()
        try:
            async with session.begin_nested():
                await session.execute(text("LOCK TABLE embeddings IN SHARE MODE NOWAIT"))
                await session.execute(
                    text(
                        f"CREATE INDEX IF NOT EXISTS {name} ON embeddings "
                        f"USING hnsw ({vector_expression(dim)} {ops}) WHERE dim = {int(dim)}"
                    )
                )
        except DBAPIError as exc:
            if getattr(exc.orig, "pgcode", None) != LOCK_NOT_AVAILABLE:
                raise
            log.info("pgvector.index_deferred", index=name, reason="another writer is busy")
            return
        log.info(
            "pgvector.index_created",
            index=name,
            dim=dim,
            seconds=round(time.perf_counter() - started, 2),
        )


def _search_sql(dim: int) -> str:
    distance = f"{vector_expression(dim)} <=> CAST(:query AS {_cast_type(dim)}({int(dim)}))"
    # `dim = d` matches the partial index's predicate; ORDER BY the indexed expression + LIMIT
    # is the shape pgvector's index scan serves.
    return (
        f"SELECT id, item_id, key, {distance} AS distance FROM embeddings "
        f"WHERE dim = {int(dim)} AND collection = :collection AND model = :model "
        "AND key = ANY(:keys) "
        f"ORDER BY {distance} LIMIT :k"
    )


def _search_params(query: VectorQuery) -> dict[str, object]:
    return {
        "query": vector_literal(query.vector),
        "collection": query.collection,
        "model": query.model,
        "keys": list(query.keys),
        "k": query.k,
    }
