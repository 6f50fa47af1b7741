"""What `eko bench recall` measures per backend and size (each part's time in ms), and the
table it prints."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.table import Table

from eko.memory.turn_recall import RecalledTurn
from eko_bench.stats import percentile

TARGET_P95_MS = 50.0
COLUMNS = ("fts", "catch_up", "recall", "build")


@dataclass
class Timings:
    backend: str
    turns: int
    ms: dict[str, list[float]] = field(default_factory=lambda: {c: [] for c in COLUMNS})
    recalled: list[list[RecalledTurn]] = field(default_factory=list)
    load_s: float = 0.0
    index_s: float = 0.0
    vectors: int = 0


def table(results: Sequence[Timings], embedder_name: str) -> Table:
    out = Table(
        title=f"Retrieval overhead per message (ms; the query's embedding by {embedder_name} "
        "excluded)"
    )
    for column in (
        "backend",
        "turns",
        "questions",
        "fts p50/p95 (baseline)",
        "catch-up p50/p95",
        "recall p50/p95/p99",
        "build p50/p95/p99",
        "recalled/q",
        "set-up s (insert+index)",
    ):
        out.add_column(column, justify="left" if column == "backend" else "right")
    for result in results:
        ms = result.ms
        n = len(ms["build"])
        out.add_row(
            result.backend,
            f"{result.turns:,}",
            str(n),
            _cell(ms["fts"], (0.5, 0.95)),
            _cell(ms["catch_up"], (0.5, 0.95)),
            _cell(ms["recall"], (0.5, 0.95, 0.99)),
            _cell(ms["build"], (0.5, 0.95, 0.99)),
            f"{statistics.fmean(len(r) for r in result.recalled):.1f}",
            f"{result.load_s:.1f}+{result.index_s:.1f}",
        )
    out.caption = (
        "recall = dense turn search + full-text search (the question's, and each sub-query's "
        "and phrase's) + rank fusion + reading the turns and their neighbours; build = the "
        "whole DualContextBuilder.build; catch-up = the request-path check for unindexed "
        f"turns. Target: recall p95 ≤ {TARGET_P95_MS:.0f} ms."
    )
    return out


def _cell(values: Sequence[float], quantiles: Sequence[float]) -> str:
    return "/".join(f"{percentile(values, q):.1f}" for q in quantiles)
