"""Lookup latency: 1k-100k random entries bulk-loaded per backend, half hits, half misses."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from rich.console import Console
from sqlalchemy import insert, text

from eko.bench.databases import fresh_database
from eko.config import Settings
from eko.embed import Embedder
from eko.embed.base import Kind
from eko.guard.normalize import key_hash
from eko.guard.scope import Scope
from eko.guard.service import COLLECTION, GuardService
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import new_id, utcnow
from eko.store.vectors import VectorIndex, VectorItem, build_vector_index

SIZES = (1_000, 10_000, 100_000)
BACKENDS = ("sqlite", "postgres")
SCOPE = Scope("bench")
LATENCY_QUERIES = 200
# Per backend and size: stop measuring early rather than let a slow backend run for minutes.
LATENCY_BUDGET_S = 15.0
LATENCY_DIM = 384
LATENCY_MODEL = "bench-random-384"


class PrecomputedOnly:
    """Names the vector space of the latency run; lookups get their vectors precomputed."""

    name = LATENCY_MODEL
    dim = LATENCY_DIM
    calibrated_threshold = 0.9

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        raise AssertionError("the latency benchmark passes vectors; nothing is embedded")


@dataclass
class LatencyRow:
    backend: str
    size: int
    load_s: float
    latencies: list[float]
    served: int


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
                index = build_vector_index(database, settings)
                console.print(f"[dim]{backend}: loading {size:,} entries…[/dim]")
                load_s = await _load(database, index, vectors[:size])
                guard = GuardService(
                    database=database,
                    vectors=index,
                    embedder=PrecomputedOnly(),
                    threshold=0.9,
                    auto_prune=False,
                )
                latencies, served = await _lookups(guard, vectors[:size], rng)
                label = f"{backend} ({index.backend})"
                rows.append(LatencyRow(label, size, load_s, latencies, served))
    return rows


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
            items=[VectorItem(ids[i], _scope_of(i).key, _question(i)) for i in range(len(ids))],
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


async def _lookups(
    guard: GuardService, stored: np.ndarray, rng: np.random.Generator
) -> tuple[list[float], int]:
    scopes = [Scope("eko"), Scope("eko", "user9")]
    shared = [i for i in range(len(stored)) if _scope_of(i) == Scope("eko")]
    latencies: list[float] = []
    served = 0
    deadline = time.perf_counter() + LATENCY_BUDGET_S
    for q in range(LATENCY_QUERIES):
        if q % 2 == 0:  # a near-duplicate of a stored question, reworded: a semantic hit
            i = shared[int(rng.integers(len(shared)))]
            noisy = stored[i] + rng.standard_normal(LATENCY_DIM).astype(np.float32) * 0.012
            vector, question = noisy / np.linalg.norm(noisy), _question(i) + " please"
        else:  # an unrelated question: a miss
            vector, question = unit_vectors(rng, 1)[0], f"What is the weather like in city {q}?"
        began = time.perf_counter()
        result = await guard.lookup(question, scopes, vector=vector)
        latencies.append(time.perf_counter() - began)
        served += result.hit is not None
        if time.perf_counter() > deadline:
            break
    return latencies, served


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
