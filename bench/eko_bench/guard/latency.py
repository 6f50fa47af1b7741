"""Lookup latency: 1k-100k random entries bulk-loaded per backend, half hits, half misses.

Per backend and size, one fresh database, then the same queries through each index:

- the database's own index (sqlite-vec or NumPy on SQLite; pgvector HNSW on PostgreSQL, at
  several `hnsw.ef_search`): the baseline;
- the in-memory index (eko.store.vectors.memory) in front of it: what the service runs.

Per index: p50/p95 of the vector search alone and of the whole GuardService.lookup (exact key +
vector search + check + usage count), also apart for misses (nothing served: no row read,
nothing written) and hits (rows read, the usage count written), top-k recall against an
exact brute-force search of the same rows, and (in memory) the bytes held per 100k vectors.

    eko bench guard --lookup [--size 1000 --size 10000 --size 100000] [--backend sqlite]
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from eko.config import Settings
from eko.embed import Embedder
from eko.embed.base import Kind
from eko.guard.normalize import key_hash
from eko.guard.scope import Scope
from eko.guard.service import COLLECTION, GuardService
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import new_id, utcnow
from eko.store.vectors import VectorHit, VectorIndex, VectorItem, build_vector_index
from eko.store.vectors.memory import MemoryVectorIndex
from eko.store.vectors.pg import PgVectorIndex
from eko_bench.databases import fresh_database

SIZES = (1_000, 10_000, 100_000)
BACKENDS = ("sqlite", "postgres")
SCOPE = Scope("bench")
LATENCY_QUERIES = 200
# Per index: stop measuring early rather than let a slow backend run for minutes.
LATENCY_BUDGET_S = 15.0
LATENCY_DIM = 384
LATENCY_MODEL = "bench-random-384"
K = 8  # the guard's default number of candidates
# pgvector breadths measured besides the configured one (recall vs time).
EF_SEARCH = (40, 100, 200)
SEARCH_KEYS = (Scope("eko"), Scope("eko", "user9"))


class PrecomputedOnly:
    """Names the vector space of the latency run; lookups get their vectors precomputed."""

    name = LATENCY_MODEL
    dim = LATENCY_DIM
    calibrated_threshold = 0.9

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        raise AssertionError("the latency benchmark passes vectors; nothing is embedded")


@dataclass
class LatencyRow:
    backend: str  # "<database> (<index>)"
    size: int
    load_s: float
    latencies: list[float]  # whole GuardService.lookup, seconds
    served: int
    # The same, apart: lookups that served nothing (read no row, write nothing) and hits
    # (rows read, the usage count written and committed).
    miss_latencies: list[float] = field(default_factory=list)
    hit_latencies: list[float] = field(default_factory=list)
    search: list[float] = field(default_factory=list)  # the vector search alone, seconds
    recall: float | None = None  # top-K recall against exact search
    hit_recall: float | None = None  # near-duplicates whose source row came first
    memory_bytes: int | None = None  # in-memory index: bytes held
    memory_rows: int | None = None
    warm_s: float | None = None  # in-memory index: first search (loads the partitions)


async def measure_latency(
    settings: Settings,
    console: Console,
    *,
    sizes: Sequence[int],
    backends: Sequence[str],
) -> list[LatencyRow]:
    rng = np.random.default_rng(0)
    vectors = unit_vectors(rng, max(sizes))
    rows: list[LatencyRow] = []
    for backend in backends:
        for size in sorted(sizes):
            # A fresh database per size, loaded in one transaction: on PostgreSQL the HNSW index
            # is then built once over all rows, as a bulk import would.
            async with fresh_database(backend) as database:
                base = build_vector_index(database, settings)
                console.print(f"[dim]{backend}: loading {size:,} entries…[/dim]")
                load_s = await _load(database, base, vectors[:size])
                queries = _queries(vectors[:size], np.random.default_rng(size))
                truth = _exact_top(vectors[:size], queries)
                for label, index in _variants(base, settings, size):
                    console.print(f"[dim]{backend} ({label}): {size:,} entries…[/dim]")
                    row = await _measure(database, index, queries, truth)
                    row.backend, row.size, row.load_s = f"{backend} ({label})", size, load_s
                    rows.append(row)
    return rows


def _variants(base: VectorIndex, settings: Settings, size: int) -> list[tuple[str, VectorIndex]]:
    found: list[tuple[str, VectorIndex]] = []
    if isinstance(base, PgVectorIndex):
        for ef in sorted({*EF_SEARCH, settings.pg_hnsw_ef_search}):
            found.append((f"pgvector ef_search={ef}", PgVectorIndex(ef_search=ef)))
    else:
        found.append((base.backend, base))
    collections = frozenset({COLLECTION})
    exact = MemoryVectorIndex(base, collections=collections)
    found.append((f"memory exact, over {base.backend}", exact))
    limit = settings.vector_memory_exact_max_rows
    if limit and size * 0.8 > limit:  # the shared scope holds 80% of the entries
        for probes in sorted({8, settings.vector_memory_probes, 32}):
            cells = MemoryVectorIndex(
                base, collections=collections, approximate_above=limit, probes=probes
            )
            found.append((f"memory cells, {probes} probes, over {base.backend}", cells))
    return found


@dataclass(frozen=True, slots=True)
class _Query:
    question: str
    vector: np.ndarray
    source: int | None  # the stored row a near-duplicate was made from


def _queries(stored: np.ndarray, rng: np.random.Generator) -> list[_Query]:
    shared = [i for i in range(len(stored)) if _scope_of(i) == Scope("eko")]
    found = []
    for q in range(LATENCY_QUERIES):
        if q % 2 == 0:  # a near-duplicate of a stored question, reworded: a semantic hit
            i = shared[int(rng.integers(len(shared)))]
            noisy = stored[i] + rng.standard_normal(LATENCY_DIM).astype(np.float32) * 0.012
            found.append(_Query(_question(i) + " please", noisy / np.linalg.norm(noisy), i))
        else:  # an unrelated question: a miss
            vector = unit_vectors(rng, 1)[0]
            found.append(_Query(f"What is the weather like in city {q}?", vector, None))
    return found


def _exact_top(stored: np.ndarray, queries: list[_Query]) -> list[set[int]]:
    """Brute force over the rows the lookups may see: the true top-K row numbers."""
    keys = {scope.key for scope in SEARCH_KEYS}
    visible = np.array([i for i in range(len(stored)) if _scope_of(i).key in keys])
    matrix = stored[visible]
    found = []
    for query in queries:
        scores = matrix @ query.vector
        best = np.argsort(-scores, kind="stable")[:K]
        found.append({int(visible[i]) for i in best})
    return found


async def _measure(
    database: Database, index: VectorIndex, queries: list[_Query], truth: list[set[int]]
) -> LatencyRow:
    guard = GuardService(
        database=database,
        vectors=index,
        embedder=PrecomputedOnly(),
        threshold=0.9,
        auto_prune=False,
    )
    keys = [scope.key for scope in SEARCH_KEYS]
    row = LatencyRow("", 0, 0.0, [], 0)
    if isinstance(index, MemoryVectorIndex):
        began = time.perf_counter()
        async with database.session() as session:
            await _search(index, session, keys, queries[0].vector)
        await index.settled()  # a large scope is split into cells in the background
        row.warm_s = time.perf_counter() - began
        row.memory_bytes, row.memory_rows = index.nbytes, index.rows
    row_of = await _row_numbers(database)
    found, first_right, near = 0, 0, 0
    deadline = time.perf_counter() + LATENCY_BUDGET_S
    for query, true_top in zip(queries, truth, strict=True):
        async with database.session() as session:
            began = time.perf_counter()
            hits = await _search(index, session, keys, query.vector)
            row.search.append(time.perf_counter() - began)
        found += len({row_of[hit.item_id] for hit in hits} & true_top)
        if query.source is not None:
            near += 1
            first_right += bool(hits) and row_of[hits[0].item_id] == query.source
        if time.perf_counter() > deadline:
            break
    row.recall = found / (K * len(row.search))
    row.hit_recall = first_right / near if near else None
    deadline = time.perf_counter() + LATENCY_BUDGET_S
    for query in queries:
        began = time.perf_counter()
        result = await guard.lookup(query.question, list(SEARCH_KEYS), vector=query.vector)
        elapsed = time.perf_counter() - began
        row.latencies.append(elapsed)
        row.served += result.hit is not None
        (row.miss_latencies if result.hit is None else row.hit_latencies).append(elapsed)
        if time.perf_counter() > deadline:
            break
    return row


async def _search(
    index: VectorIndex, session: AsyncSession, keys: list[str], vector: np.ndarray
) -> list[VectorHit]:
    return await index.search(
        session, collection=COLLECTION, model=LATENCY_MODEL, keys=keys, query=vector, k=K
    )


async def _row_numbers(database: Database) -> dict[str, int]:
    """entry id -> row number of the loaded matrix (kept in the entry's text)."""
    async with database.session() as session:
        result = await session.execute(
            text("SELECT item_id, text FROM embeddings WHERE collection = :c"), {"c": COLLECTION}
        )
        return {item_id: int(stored.rsplit(" ", 1)[1]) for item_id, stored in result.all()}


def _scope_of(i: int) -> Scope:
    # Most entries are shared by the persona; some belong to another persona or to one user.
    if i % 10 == 8:
        return Scope("lisa")
    if i % 10 == 9:
        return Scope("eko", f"user{i % 100}")
    return Scope("eko")


def _question(i: int) -> str:
    return f"How do I configure option {i} of the billing service?"


async def _load(database: Database, index: VectorIndex, vectors: np.ndarray) -> float:
    """Bulk-insert len(vectors) entries and their vectors (the vectors' real write path)."""
    began = time.perf_counter()
    now = utcnow()
    ids = [new_id() for _ in range(len(vectors))]
    async with database.session() as session:
        if database.dialect == "postgresql":
            # The HNSW build holds its graph in memory; the default 64 MB is too small.
            await session.execute(text("SELECT set_config('maintenance_work_mem', '1GB', true)"))
        for start in range(0, len(ids), 1_000):
            await session.execute(
                insert(GuardEntry),
                [
                    _entry_row(ids[i], _scope_of(i), _question(i), now)
                    for i in range(start, min(start + 1_000, len(ids)))
                ],
            )
        await index.upsert_many(
            session,
            collection=COLLECTION,
            model=LATENCY_MODEL,
            # The row number ends the stored text: recall maps hits back to rows with it.
            items=[
                VectorItem(ids[i], _scope_of(i).key, f"{_question(i)} {i}") for i in range(len(ids))
            ],
            vectors=vectors,
        )
    if database.dialect == "postgresql":
        async with database.session() as session:
            await session.execute(text("ANALYZE guard_entries"))
            await session.execute(text("ANALYZE embeddings"))
    return time.perf_counter() - began


def _entry_row(entry_id: str, scope: Scope, question: str, now: datetime) -> dict[str, Any]:
    return {
        "id": entry_id,
        "scope": scope.key,
        "key_hash": key_hash(scope.key, question),
        "question": question,
        "answer": "Open Settings, then Billing.",
        "meta": {"validated_by": "bench"},
        "status": "active",
        "usage_count": 0,
        "source_message_id": None,
        "created_at": now,
    }


async def embed_latency(embedder: Embedder) -> list[float]:
    await embedder.embed(["warm-up"])
    times = []
    for i in range(30):
        began = time.perf_counter()
        await embedder.embed([f"How do I reset the password of account {i}?"])
        times.append(time.perf_counter() - began)
    return times


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, LATENCY_DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def lookup_table(rows: list[LatencyRow]) -> Table:
    """The `--lookup` table: both timings, recall against exact search, memory."""
    table = Table(
        title=(
            f"Memory guard lookup at scale (random {LATENCY_DIM}-dim vectors; half near-duplicate "
            f"hits, half misses; top-{K} recall vs exact brute force over the same rows)"
        )
    )
    columns = (
        "index",
        "entries",
        "search p50",
        "search p95",
        "lookup p50",
        "lookup p95",
        "miss p50 / p95",
        "hit p50 / p95",
    )
    extra = (f"recall@{K}", "top-1 on hits", "served", "memory / 100k", "first load")
    for column in (*columns, *extra):
        table.add_column(column, justify="left" if column == "index" else "right")
    for row in rows:
        per_100k = (
            f"{row.memory_bytes / row.memory_rows * 100_000 / 2**20:.0f} MB"
            if row.memory_bytes and row.memory_rows
            else "-"
        )
        table.add_row(
            row.backend,
            f"{row.size:,}",
            _ms(statistics.median(row.search)),
            _ms(p95(row.search)),
            _ms(statistics.median(row.latencies)),
            _ms(p95(row.latencies)),
            _pair(row.miss_latencies),
            _pair(row.hit_latencies),
            "-" if row.recall is None else f"{row.recall:.3f}",
            "-" if row.hit_recall is None else f"{row.hit_recall:.3f}",
            f"{row.served}/{len(row.latencies)}",
            per_100k,
            "-" if row.warm_s is None else f"{row.warm_s:.2f} s",
        )
    return table


async def run_lookup(
    *,
    settings: Settings,
    console: Console,
    sizes: Sequence[int] = SIZES,
    backends: Sequence[str] = BACKENDS,
) -> list[LatencyRow]:
    """Measure and print the lookup table (what `eko bench guard --lookup` runs)."""
    rows = await measure_latency(settings, console, sizes=sizes, backends=backends)
    console.print(lookup_table(rows))
    return rows


def _pair(values: list[float]) -> str:
    """p50 / p95 in ms, or "-" when there is none."""
    if not values:
        return "-"
    return f"{statistics.median(values) * 1000:.2f} / {p95(values) * 1000:.2f} ms"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]
