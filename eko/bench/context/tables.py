"""The tables `eko bench context` prints."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from eko.bench.context.scoring import FLOORS, ITEM_FLOORS, Result, Score
from eko.config import Settings

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _floor_cell(score: Score) -> str:
    chars = statistics.mean(score.chars)
    used = statistics.mean(score.summaries)
    return f"{_pct(score.all_covered, score.questions)}\n{chars:,.0f} ch · {used:.1f} s"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def _quantiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return f"p10 {q(0.1):.3f} · p50 {q(0.5):.3f} · p90 {q(0.9):.3f}"


def print_main(console: Console, results: list[Result]) -> None:
    table = Table(title="Dual context on LoCoMo (3 conversations; questions asked at the end)")
    columns = (
        "context",
        "evidence recall (all)",
        "(any)",
        "fact hit",
        "prompt chars mean",
        "p95",
        "summaries used",
        "summary calls",
        "build p50 ms",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "context" else "right")
    baseline = results[0].recent
    table.add_row(
        "recent turns only (baseline)",
        _pct(baseline.all_covered, baseline.questions),
        _pct(baseline.any_covered, baseline.questions),
        "-",
        f"{statistics.mean(baseline.chars):,.0f}",
        f"{_p95(baseline.chars):,.0f}",
        "0",
        "0",
        f"{statistics.median(baseline.build_ms):.0f}",
    )
    for result in results:
        dual = result.dual
        levels = " ".join(f"L{k}:{v}" for k, v in sorted(result.levels.items()))
        table.add_row(
            f"recent + RAG + facts, every {result.setup.every:,} chars ({levels})",
            _pct(dual.all_covered, dual.questions),
            _pct(dual.any_covered, dual.questions),
            _pct(dual.fact_hits, dual.questions),
            f"{statistics.mean(dual.chars):,.0f}",
            f"{_p95(dual.chars):,.0f}",
            f"{statistics.mean(dual.summaries):.1f}",
            str(result.setup.summary_calls),
            f"{statistics.median(dual.build_ms):.0f}",
        )
    console.print(table)
    console.print(
        f"questions scored: {baseline.questions} (skipped, no evidence id: {results[0].skipped})"
    )


def print_categories(console: Console, results: list[Result]) -> None:
    table = Table(title="Evidence recall (all) by question category")
    for column in ("category", "questions", "recent only"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for result in results:
        table.add_column(f"dual, every {result.setup.every:,}", justify="right")
    for category, name in CATEGORIES.items():
        counts = results[0].recent.by_category.get(category, [])
        row = [f"{category} {name}", str(len(counts)), _pct(sum(counts), len(counts))]
        for result in results:
            hits = result.dual.by_category.get(category, [])
            row.append(_pct(sum(hits), len(hits)))
        table.add_row(*row)
    console.print(table)


def print_sweeps(console: Console, results: list[Result], name: str, settings: Settings) -> None:
    table = Table(
        title=f"ragMinScore sweep ({name}; top {settings.rag_max_summaries}): "
        "recall (all) / prompt chars / summaries used"
    )
    table.add_column("every")
    table.add_column("similarity of summaries covering evidence | others")
    for value in FLOORS:
        table.add_column(f"≥ {value:.2f}", justify="right")
    for result in results:
        positives, negatives = result.sweep.summary_sims
        table.add_row(
            f"{result.setup.every:,}",
            f"{_quantiles(positives)}\n{_quantiles(negatives)}",
            *(_floor_cell(result.sweep.summaries[v]) for v in FLOORS),
        )
    console.print(table)
    table = Table(
        title=f"facts min score sweep ({name}; top {settings.memory_context_max_items}"
        "): fact hit / facts used"
    )
    table.add_column("similarity of facts from evidence turns | others")
    for value in ITEM_FLOORS:
        table.add_column(f"≥ {value:.2f}", justify="right")
    swept = results[0].sweep
    positives, negatives = swept.item_sims
    table.add_row(
        f"{_quantiles(positives)}\n{_quantiles(negatives)}",
        *(
            f"{_pct(swept.items[v].fact_hits, swept.items[v].questions)}\n"
            f"{statistics.mean(swept.items[v].facts):.1f} facts"
            for v in ITEM_FLOORS
        ),
    )
    console.print(table)


def print_growth(console: Console, results: list[Result]) -> None:
    table = Table(
        title="Prompt chars vs history length (mean of probe questions, after each session)"
    )
    for column in ("history", "sessions", "full history in prompt", "recent only"):
        table.add_column(column, justify="left" if column == "history" else "right")
    for result in results:
        table.add_column(f"dual, every {result.setup.every:,}", justify="right")
    for low, high in ((0, 20_000), (20_000, 40_000), (40_000, 60_000), (60_000, 100_000)):

        def within(result: Result, low: int = low, high: int = high) -> list[tuple[int, ...]]:
            return [g for room in result.setup.rooms for g in room.growth if low <= g[0] < high]

        first = within(results[0])
        if not first:
            continue
        row = [
            f"{low // 1000}k-{high // 1000}k chars",
            str(len(first)),
            f"{statistics.mean(g[0] for g in first):,.0f}",
            f"{statistics.mean(g[2] for g in first):,.0f}",
        ]
        for result in results:
            same = within(result)
            row.append(f"{statistics.mean(g[1] for g in same):,.0f}" if same else "-")
        table.add_row(*row)
    console.print(table)
