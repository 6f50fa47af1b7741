"""Embedder speed (sentences/s, one at a time and in batches of 256), and threshold calibration.

`run()` is what `eko bench embed` shows. `calibrate()` measures, on labelled question pairs
(QQP), the cosine at which two questions are "the same" for one model: the value behind each
embedder's `calibrated_threshold`. Run it by hand when adding or changing a model:

    eko bench embed --calibrate [--data ../shared/data/qqp-dev-3000.jsonl.gz] [--limit N]
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko_bench.guard.pairs import load_pairs as read_pairs

# Varied lengths and two languages: speed depends on token count.
_SENTENCES = [
    "What is the best way to learn a new language as an adult?",
    "Quelle est la meilleure façon d'apprendre une langue à l'âge adulte ?",
    "The meeting about the Q3 roadmap moved to Thursday afternoon.",
    "Peux-tu me rappeler ce que nous avons décidé pour le budget du projet la semaine dernière ?",
    "How do I reset my password?",
    "Summarize the discussion about database migrations and the rollback plan.",
    "J'ai oublié mon mot de passe, comment le réinitialiser ?",
    "Why is the sky blue during the day but red at sunset?",
]
SINGLE_CALLS = 30
ROUND_THRESHOLDS = (0.85, 0.90, 0.93, 0.95, 0.96, 0.97)
BATCH_SIZE = 256


async def run(*, settings: Settings, console: Console) -> None:
    embedder = build_embedder(settings)
    await embedder.embed(["warm-up"])  # loads the model: not part of the measurement
    singles = []
    for i in range(SINGLE_CALLS):
        start = time.perf_counter()
        await embedder.embed([_SENTENCES[i % len(_SENTENCES)]])
        singles.append(time.perf_counter() - start)
    batch = [f"{_SENTENCES[i % len(_SENTENCES)]} ({i})" for i in range(BATCH_SIZE)]
    start = time.perf_counter()
    await embedder.embed(batch, kind="passage")
    batch_s = time.perf_counter() - start

    table = Table(title=f"Embedder {embedder.name} (dim {embedder.dim})")
    table.add_column("workload")
    table.add_column("latency", justify="right")
    table.add_column("sentences/s", justify="right")
    p50 = statistics.median(singles)
    table.add_row("1 sentence (p50 of 30)", f"{p50 * 1000:.1f} ms", f"{1 / p50:.0f}")
    table.add_row(f"batch of {BATCH_SIZE}", f"{batch_s:.2f} s", f"{BATCH_SIZE / batch_s:.0f}")
    console.print(table)
    console.print(f"calibrated threshold: {embedder.calibrated_threshold}")
    await _close(embedder)


@dataclass(frozen=True)
class Calibration:
    auc: float
    best_f1_threshold: float
    best_f1: float
    # The lowest threshold whose false-hit rate (non-duplicates scored above it) is ≤ max_false_hit.
    safe_threshold: float
    safe_precision: float
    safe_recall: float
    # threshold → (precision, recall, false-hit rate), at a few round thresholds.
    points: dict[float, tuple[float, float, float]]


def load_pairs(path: Path, limit: int | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """QQP pairs {text_a, text_b, label} per line (.jsonl or .jsonl.gz), read by the guard
    bench's reader, as the two texts and the labels."""
    pairs = read_pairs(path, limit)
    labels = np.array([pair.label for pair in pairs], dtype=np.int8)
    return [pair.text_a for pair in pairs], [pair.text_b for pair in pairs], labels


def calibrate(
    scores: np.ndarray, labels: np.ndarray, *, max_false_hit: float = 0.05
) -> Calibration:
    """Pure metrics over pair cosines: AUC, the best-F1 threshold, the ≤ max_false_hit one."""
    positives = labels == 1
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_pos = scores[order], positives[order]
    # Cumulative counts when the threshold sits at each score (predict "same" if >= it).
    tp = np.cumsum(sorted_pos)
    fp = np.cumsum(~sorted_pos)
    # Only the last index of a run of equal scores is a reachable threshold.
    last = np.r_[sorted_scores[1:] != sorted_scores[:-1], True]
    tp, fp, thresholds = tp[last], fp[last], sorted_scores[last]
    precision = tp / (tp + fp)
    recall = tp / max(n_pos, 1)
    f1 = np.where(tp > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    false_hit = fp / max(n_neg, 1)
    best = int(np.argmax(f1))
    safe_candidates = np.nonzero(false_hit <= max_false_hit)[0]
    safe = int(safe_candidates[-1]) if safe_candidates.size else 0
    # AUC = P(score of a random duplicate > score of a random non-duplicate), ties counted half.
    ranks = _average_ranks(scores)
    auc = (ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1)
    return Calibration(
        auc=float(auc),
        best_f1_threshold=float(thresholds[best]),
        best_f1=float(f1[best]),
        safe_threshold=float(thresholds[safe]),
        safe_precision=float(precision[safe]),
        safe_recall=float(recall[safe]),
        points={t: _at(scores, positives, t) for t in ROUND_THRESHOLDS},
    )


def _at(scores: np.ndarray, positives: np.ndarray, threshold: float) -> tuple[float, float, float]:
    hit = scores >= threshold
    tp, fp = int((hit & positives).sum()), int((hit & ~positives).sum())
    precision = tp / (tp + fp) if tp + fp else 1.0
    return precision, tp / max(int(positives.sum()), 1), fp / max(int((~positives).sum()), 1)


def _average_ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    unique, inverse = np.unique(values, return_inverse=True)
    sums = np.bincount(inverse, weights=ranks, minlength=len(unique))
    counts = np.bincount(inverse, minlength=len(unique))
    averaged: np.ndarray = (sums / counts)[inverse]
    return averaged


async def pair_scores(embedder: Embedder, left: list[str], right: list[str]) -> np.ndarray:
    # "query" on both sides: the memory guard compares a question with stored questions.
    unique = sorted(set(left) | set(right))
    vectors = await embedder.embed(unique, kind="query")
    index = {text: i for i, text in enumerate(unique)}
    a = vectors[[index[t] for t in left]]
    b = vectors[[index[t] for t in right]]
    scores: np.ndarray = np.einsum("ij,ij->i", a, b)
    return scores


def print_calibration(console: Console, name: str, result: Calibration, n: int) -> None:
    table = Table(title=f"Threshold calibration of {name} on {n} QQP pairs")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("AUC", f"{result.auc:.3f}")
    table.add_row("best-F1 threshold", f"{result.best_f1_threshold:.3f}")
    table.add_row("best F1", f"{result.best_f1:.3f}")
    table.add_row("≤5% false-hit threshold", f"{result.safe_threshold:.3f}")
    table.add_row(
        "  precision / recall there", f"{result.safe_precision:.2f} / {result.safe_recall:.2f}"
    )
    for threshold, (precision, recall, false_hit) in result.points.items():
        table.add_row(
            f"at {threshold:.2f}: precision / recall / false-hit",
            f"{precision:.2f} / {recall:.2f} / {false_hit:.1%}",
        )
    console.print(table)


async def _close(embedder: Embedder) -> None:
    aclose = getattr(embedder, "aclose", None)
    if aclose is not None:
        await aclose()


async def run_calibration(
    *, settings: Settings, console: Console, data: Path, limit: int | None = None
) -> None:
    """`eko bench embed --calibrate`: the threshold metrics of the configured embedder."""
    embedder = build_embedder(settings)
    left, right, labels = load_pairs(data, limit)
    start = time.perf_counter()
    scores = await pair_scores(embedder, left, right)
    console.print(f"embedded in {time.perf_counter() - start:.1f} s")
    print_calibration(console, embedder.name, calibrate(scores, labels), len(labels))
    await _close(embedder)
