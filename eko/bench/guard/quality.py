"""Answer quality on QQP: learn every text_a, look up every text_b and the contrasts."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress

from eko.bench.bench_embed import load_pairs
from eko.bench.guard.contrasts import make_contrasts
from eko.config import Settings
from eko.embed import Embedder
from eko.embed.base import Kind
from eko.guard.check import false_hit_check
from eko.guard.decide import Candidate, decide
from eko.guard.normalize import normalize_question
from eko.guard.scope import Scope
from eko.guard.service import GuardService
from eko.store.db import Database
from eko.store.migrate import upgrade
from eko.store.vectors import build_vector_index

THRESHOLDS = (0.80, 0.85, 0.90, 0.95)
SCOPE = Scope("bench")


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
    settings: Settings, embedder: Embedder, console: Console, *, data: Path, limit: int | None
) -> tuple[list[QualityRow], dict[str, Any]]:
    left, right, labels = load_pairs(data, limit)
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
