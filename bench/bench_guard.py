"""Memory guard benchmark: answer quality on QQP, false hits, and lookup latency.

Quality (the configured embedder, SQLite): every `text_a` of ../shared/data/qqp-dev-3000.jsonl.gz
is learned as an entry of one scope through GuardService.learn; every `text_b` is then looked up
through GuardService.lookup against all 3,000 entries. For each threshold, with and without the
false-hit check (the same `decide` the service runs, over the candidates the index returned):

- precision: served answers that are right (a label-1 pair served its own text_a) / all served;
- recall: label-1 pairs served their own text_a / label-1 pairs;
- false-hit rate: label-0 pairs served any answer / label-0 pairs (the issue's definition).

Synthetic contrasts (built to probe the check, not a random sample): a stored question with
its auxiliary negated ("Why is X…" -> "Why isn't X…"), a number changed, or a name swapped for
another question's name. Every serve of a contrast is a false hit.

Latency (random unit vectors, no model): 1k, 10k and 100k entries bulk-loaded (one transaction)
into a fresh SQLite and PostgreSQL database each; p50/p95 of GuardService.lookup with a
precomputed vector (half near-duplicates of stored questions, served and counted; half misses),
plus the embedder's own time for one question, measured apart.

    eko bench guard
    .venv/bin/python -m bench.bench_guard --limit 500 --sizes 1000 --backends sqlite   # quick
    .venv/bin/python -m bench.bench_guard --latency-only
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from sqlalchemy import insert, text

from bench.bench_embed import load_pairs
from bench.bench_vectors import _database as fresh_database
from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko.embed.base import Kind
from eko.guard.check import false_hit_check, names
from eko.guard.decide import Candidate, decide
from eko.guard.normalize import key_hash, normalize_question
from eko.guard.scope import Scope
from eko.guard.service import COLLECTION, GuardService
from eko.logging import configure_logging
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.migrate import upgrade
from eko.store.models import new_id, utcnow
from eko.store.vectors import VectorIndex, VectorItem, build_vector_index

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qqp-dev-3000.jsonl.gz"
THRESHOLDS = (0.80, 0.85, 0.90, 0.95)
SIZES = (1_000, 10_000, 100_000)
BACKENDS = ("sqlite", "postgres")
SCOPE = Scope("bench")
LATENCY_QUERIES = 200
# Per backend and size: stop measuring early rather than let a slow backend run for minutes.
LATENCY_BUDGET_S = 15.0
LATENCY_DIM = 384
LATENCY_MODEL = "bench-random-384"
CONTRASTS_PER_KIND = 300


# --- quality on QQP ---


class CachedEmbedder:
    """The configured embedder, with every text embedded once per run (memory only)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calibrated_threshold = inner.calibrated_threshold
        self.cache: dict[str, np.ndarray] = {}

    async def warm(self, texts: Sequence[str], progress: Progress, batch: int = 64) -> None:
        todo = sorted(set(texts) - self.cache.keys())
        task = progress.add_task(f"embedding {len(todo):,} questions", total=len(todo))
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = await self.inner.embed(chunk, kind="query")
            self.cache.update(zip(chunk, vectors, strict=True))
            progress.advance(task, len(chunk))

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        missing = [t for t in texts if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, await self.inner.embed(missing, kind=kind), strict=True))
        return np.stack([self.cache[t] for t in texts])


@dataclass
class Asked:
    """One question looked up: the exact-key hit, or the candidates the index returned."""

    question: str
    exact: str | None
    candidates: list[Candidate[str]]

    def served(self, threshold: float, check: bool) -> str | None:
        if self.exact is not None:
            return self.exact
        decision = decide(
            self.question,
            self.candidates,
            threshold=threshold,
            check=false_hit_check if check else None,
        )
        return decision.served.candidate.item if decision.served else None


@dataclass
class QualityRow:
    threshold: float
    check: bool
    precision: float
    recall: float
    false_hit_rate: float
    contrast: dict[str, float] = field(default_factory=dict)


async def ask_all(guard: GuardService, questions: Sequence[str], progress: Progress) -> list[Asked]:
    task = progress.add_task(f"looking up {len(questions):,} questions", total=len(questions))
    asked: list[Asked] = []
    for question in questions:
        result = await guard.lookup(question, [SCOPE], record_use=False)
        if result.hit is not None and result.hit.match == "exact":
            asked.append(Asked(question, result.hit.entry.question, []))
        else:
            judged = result.decision.judged if result.decision else []
            asked.append(
                Asked(
                    question,
                    None,
                    [
                        Candidate(
                            j.candidate.question,
                            j.candidate.question,
                            j.candidate.score,
                            j.candidate.created_at,
                        )
                        for j in judged
                    ],
                )
            )
        progress.advance(task)
    return asked


async def measure_quality(
    settings: Settings, embedder: Embedder, console: Console, *, limit: int | None
) -> tuple[list[QualityRow], dict[str, Any]]:
    left, right, labels = load_pairs(DATA, limit)
    contrasts = make_contrasts(left)
    cached = CachedEmbedder(embedder)
    thresholds = sorted({*THRESHOLDS, float(embedder.calibrated_threshold)})
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="eko-bench-guard-") as tmp:
        database = Database(f"sqlite+aiosqlite:///{Path(tmp) / 'guard.db'}")
        try:
            await upgrade(database)
            guard = GuardService(
                database=database,
                vectors=build_vector_index(database, settings),
                embedder=cached,
                threshold=min(thresholds),
                auto_prune=False,
            )
            all_contrasts = [c for items in contrasts.values() for c, _ in items]
            with Progress(console=console, transient=True) as progress:
                await cached.warm([*left, *right, *all_contrasts], progress)
                embed_s = time.perf_counter() - started
                task = progress.add_task(f"learning {len(left):,} entries", total=len(left))
                for i, question in enumerate(left):
                    await guard.learn(question=question, answer=f"answer {i}", scope=SCOPE)
                    progress.advance(task)
                pairs = await ask_all(guard, right, progress)
                contrast_asked = {
                    kind: await ask_all(guard, [c for c, _ in items], progress)
                    for kind, items in contrasts.items()
                }
        finally:
            await database.dispose()
    rows = []
    positives = int((labels == 1).sum())
    negatives = int((labels == 0).sum())
    for threshold in thresholds:
        for check in (False, True):
            served = [a.served(threshold, check) for a in pairs]
            right_answers = sum(
                1
                for s, a, label in zip(served, left, labels, strict=True)
                if s is not None and label == 1 and normalize_question(s) == normalize_question(a)
            )
            n_served = sum(s is not None for s in served)
            false_hits = sum(
                1 for s, label in zip(served, labels, strict=True) if s is not None and label == 0
            )
            contrast = {
                kind: sum(a.served(threshold, check) is not None for a in asked)
                / max(len(asked), 1)
                for kind, asked in contrast_asked.items()
            }
            rows.append(
                QualityRow(
                    threshold,
                    check,
                    right_answers / max(n_served, 1),
                    right_answers / max(positives, 1),
                    false_hits / max(negatives, 1),
                    contrast,
                )
            )
    info = {
        "pairs": len(labels),
        "positives": positives,
        "negatives": negatives,
        "contrasts": {kind: len(items) for kind, items in contrasts.items()},
        "embed_s": embed_s,
        "total_s": time.perf_counter() - started,
        "calibrated": float(embedder.calibrated_threshold),
    }
    return rows, info


_AUX = re.compile(
    r"\b(is|are|was|were|do|does|did|can|could|should|would|will|has|have)\b", re.IGNORECASE
)
_NEGATED_AUX = {
    "is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't", "do": "don't",
    "does": "doesn't", "did": "didn't", "can": "can't", "could": "couldn't",
    "should": "shouldn't", "would": "wouldn't", "will": "won't", "has": "hasn't",
    "have": "haven't",
}  # fmt: skip
_NUMBER = re.compile(r"\b\d+\b")


def make_contrasts(questions: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """(contrast, original) pairs of three kinds, deterministic, up to CONTRASTS_PER_KIND each."""
    rng = np.random.default_rng(7)
    pool = sorted({n for q in questions for n in _name_tokens(q)})
    out: dict[str, list[tuple[str, str]]] = {"negation": [], "number": [], "name": []}
    for question in dict.fromkeys(questions):
        negated = _negate(question)
        if negated and len(out["negation"]) < CONTRASTS_PER_KIND:
            out["negation"].append((negated, question))
        number = _NUMBER.search(question)
        if number and len(out["number"]) < CONTRASTS_PER_KIND:
            changed = str(int(number.group(0)) + 1)
            out["number"].append(
                (question[: number.start()] + changed + question[number.end() :], question)
            )
        tokens = _name_tokens(question)
        if tokens and pool and len(out["name"]) < CONTRASTS_PER_KIND:
            other = str(pool[int(rng.integers(len(pool)))])
            if other.lower() not in question.lower():
                out["name"].append(
                    (re.sub(rf"\b{re.escape(tokens[0])}\b", other, question, count=1), question)
                )
    return out


def _negate(question: str) -> str | None:
    match = _AUX.search(question)
    if match is None or re.search(r"n't\b|\bnot\b|\bnever\b", question, re.IGNORECASE):
        return None
    word = match.group(0)
    negated = _NEGATED_AUX[word.lower()]
    if word[0].isupper():
        negated = negated[0].upper() + negated[1:]
    return question[: match.start()] + negated + question[match.end() :]


def _name_tokens(question: str) -> list[str]:
    """Names as written in the question (the check's own extractor decides what is a name)."""
    found = names(question)
    return [t for t in re.findall(r"[A-Z][\w]+", question) if t.lower() in found]


_CONTRAST_LABELS = {"negation": "negated", "number": "number changed", "name": "name swapped"}


def quality_table(rows: list[QualityRow], info: dict[str, Any], embedder: str) -> Table:
    table = Table(
        title=(
            f"Memory guard on QQP ({info['pairs']:,} pairs: {info['positives']:,} same, "
            f"{info['negatives']:,} different; all text_a in one scope), embedder {embedder}"
        )
    )
    for column in ("threshold", "check", "precision", "recall", "false-hit rate"):
        table.add_column(column, justify="right")
    for kind, n in info["contrasts"].items():
        table.add_column(f"{_CONTRAST_LABELS[kind]} served (n={n})", justify="right")
    for row in rows:
        label = (
            f"{row.threshold:.2f}"
            if round(row.threshold, 2) == row.threshold
            else (f"{row.threshold:.3f}")
        )
        if row.threshold == info["calibrated"]:
            label += " (calibrated)"
        table.add_row(
            label,
            "on" if row.check else "off",
            f"{row.precision:.3f}",
            f"{row.recall:.3f}",
            f"{row.false_hit_rate:.1%}",
            *(f"{row.contrast[kind]:.1%}" for kind in info["contrasts"]),
        )
    return table


# --- latency ---


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
    vectors = _unit(rng, max(sizes))
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
            vector, question = _unit(rng, 1)[0], f"What is the weather like in city {q}?"
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


def latency_table(rows: list[LatencyRow], embed_times: list[float], embedder: str) -> Table:
    table = Table(
        title=(
            "Memory guard lookup latency (exact key + vector search + check + usage count; "
            "half hits, half misses; vectors precomputed)"
        )
    )
    for column in ("backend", "entries", "load", "p50", "p95", "served", "lookups"):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for row in rows:
        table.add_row(
            row.backend,
            f"{row.size:,}",
            f"{row.load_s:.1f} s",
            f"{_ms(statistics.median(row.latencies))}",
            f"{_ms(_p95(row.latencies))}",
            f"{row.served}/{len(row.latencies)}",
            str(len(row.latencies)),
        )
    table.add_row(
        f"+ embed 1 question ({embedder})",
        "-",
        "-",
        _ms(statistics.median(embed_times)),
        _ms(_p95(embed_times)),
        "-",
        str(len(embed_times)),
    )
    return table


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    matrix = rng.standard_normal((n, LATENCY_DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


# --- entry point ---


async def run(
    *,
    settings: Settings,
    console: Console,
    limit: int | None = None,
    sizes: Sequence[int] = SIZES,
    backends: Sequence[str] = BACKENDS,
    quality: bool = True,
) -> None:
    embedder = build_embedder(settings)
    if quality and not DATA.exists():
        console.print(f"[red]missing {DATA}[/red]: run from a checkout next to ../shared/data")
    elif quality:
        rows, info = await measure_quality(settings, embedder, console, limit=limit)
        console.print(quality_table(rows, info, embedder.name))
        console.print(
            f"[dim]quality run: {info['total_s']:.0f} s, of which embedding "
            f"{info['embed_s']:.0f} s; a label-1 pair counts as right only when its own text_a "
            "is served[/dim]"
        )
    embed_times = await embed_latency(embedder)
    latency = await measure_latency(settings, console, sizes=sizes, backends=backends)
    console.print(latency_table(latency, embed_times, embedder.name))
    aclose = getattr(embedder, "aclose", None)
    if aclose is not None:
        await aclose()


async def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="QQP pairs to use")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--latency-only", action="store_true", help="skip the QQP quality run")
    args = parser.parse_args()
    configure_logging("WARNING")
    await run(
        settings=Settings(),
        console=Console(),
        limit=args.limit,
        sizes=args.sizes,
        backends=args.backends,
        quality=not args.latency_only,
    )


if __name__ == "__main__":
    asyncio.run(_main())
