"""The content-recall table of `eko bench context`."""

from __future__ import annotations

import statistics

from rich.console import Console
from rich.table import Table

from eko_bench.context.content import approx_tokens
from eko_bench.context.recall import SCORED_CATEGORIES, MethodScore, RecallResult

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def _pct(score: MethodScore, category: int | None = None) -> str:
    hits, total = score.share(category)
    return f"{100 * hits / total:.1f}%" if total else "-"


def print_recall(console: Console, result: RecallResult, *, title: str) -> None:
    table = Table(title=title)
    table.add_column("context")
    table.add_column("content recall", justify="right")
    for category in SCORED_CATEGORIES:
        table.add_column(f"{category} {CATEGORY_NAMES[category]}", justify="right")
    table.add_column("chars mean", justify="right")
    table.add_column("≈tokens mean", justify="right")
    rows = [*result.methods.items(), ("range coverage (secondary, eko)", result.range_covered)]
    for name, score in rows:
        if not score.chars:
            table.add_row(name, "-", *("-" for _ in SCORED_CATEGORIES), "-", "-")
            continue
        mean = statistics.mean(score.chars)
        table.add_row(
            name,
            _pct(score),
            *(_pct(score, c) for c in SCORED_CATEGORIES),
            f"{mean:,.0f}",
            f"{approx_tokens(round(mean)):,}",
        )
    console.print(table)
    first = next(iter(result.methods.values()))
    counts = ", ".join(f"{c}: {len(first.found.get(c, []))}" for c in SCORED_CATEGORIES)
    console.print(
        f"questions scored: {result.questions} ({counts}); category 5 (adversarial) excluded: "
        f"{result.excluded_adversarial}; skipped (no evidence turn): {result.skipped_no_evidence}."
        "\nfound = every evidence turn present (whole text, or ≥ 80% of its ≥ 3 content tokens)"
        " or the answer present as a phrase; Eko's facts here are LoCoMo's annotated"
        " observations (gold text written from the evidence turns, a leak: see 'eko without"
        " facts'); random and BM25 fill the row's context budget (without a budget: the size"
        " of Eko's context) per question; unrelated = Eko's context for another"
        " conversation's question (must stay low); range coverage = evidence inside a"
        " retrieved summary's span (saturates);"
        " tokens ≈ chars / 4."
    )
