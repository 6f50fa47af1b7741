"""The tables `eko bench guard` prints."""

from __future__ import annotations

import statistics
from typing import Any

from rich.table import Table

from eko.bench.guard.latency import LatencyRow
from eko.bench.guard.quality import QualityRow

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
