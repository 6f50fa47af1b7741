"""The content-recall tables of `eko bench context`: the context at a character budget, and
the prompt the model receives (--provider-budget)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table

from eko_bench.context.content import MIN_ANSWER_TOKENS, approx_tokens
from eko_bench.context.prompt_recall import PromptStats
from eko_bench.context.recall import SCORED_CATEGORIES, MethodScore, RecallResult

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def _pct(score: MethodScore, category: int | None = None) -> str:
    hits, total = score.share(category)
    return f"{100 * hits / total:.1f}%" if total else "-"


def _table(title: str, rows: Sequence[tuple[str, MethodScore]], first: str) -> Table:
    table = Table(title=title)
    table.add_column(first)
    table.add_column("strict recall", justify="right")
    for category in SCORED_CATEGORIES:
        table.add_column(f"{category} {CATEGORY_NAMES[category]}", justify="right")
    table.add_column("answer match (secondary)", justify="right")
    table.add_column("chars mean", justify="right")
    table.add_column("≈tokens mean", justify="right")
    for name, score in rows:
        if not score.chars:
            table.add_row(name, "-", *("-" for _ in SCORED_CATEGORIES), "-", "-", "-")
            continue
        mean = statistics.mean(score.chars)
        answered = score.answered
        table.add_row(
            name,
            _pct(score),
            *(_pct(score, c) for c in SCORED_CATEGORIES),
            f"{100 * sum(answered) / len(answered):.1f}%" if answered else "-",
            f"{mean:,.0f}",
            f"{approx_tokens(round(mean)):,}",
        )
    return table


RULE = (
    "strict recall = every evidence turn present within one passage (a summary, a recalled"
    " or recent turn, a fact line: whole text, or ≥ 80% of its ≥ 3 content tokens); answer"
    f" match = the answer as a phrase within one passage, answers of fewer than"
    f" {MIN_ANSWER_TOKENS} content words never counted; random turns of the same conversation"
    " (the same-conversation control) and BM25 fill the same budget; unrelated = the context"
    " built for another conversation's question (must stay low); tokens ≈ chars / 4."
)


def print_recall(console: Console, result: RecallResult, *, title: str) -> None:
    rows = [*result.methods.items(), ("range coverage (secondary, eko)", result.range_covered)]
    console.print(_table(title, rows, "context"))
    _counts(console, result.methods, result)
    console.print(
        RULE + " Eko's facts here are LoCoMo's annotated observations (gold text written from"
        " the evidence turns, a leak: see 'eko without facts'); without a budget, random and"
        " BM25 fill the size of Eko's context; range coverage = evidence inside a retrieved"
        " summary's span (saturates)."
    )


def print_prompt_recall(
    console: Console,
    methods: Mapping[str, MethodScore],
    stats: Sequence[PromptStats],
    result: RecallResult,
    *,
    title: str,
) -> None:
    console.print(_table(title, list(methods.items()), "in the prompt the model receives"))
    _counts(console, methods, result)
    for stat in stats:
        memory = statistics.mean(stat.memory_chars) if stat.memory_chars else 0
        prompt = statistics.mean(stat.prompt_chars) if stat.prompt_chars else 0
        console.print(
            f"{stat.label}: {stat.how}; memory section {memory:,.0f} chars mean, prompt"
            f" received {prompt:,.0f} chars mean; prompts cut by the budget: {stat.prompts_cut}"
            f" of {stat.questions}; evidence memory selected but the budget cut: "
            f"{stat.evidence_cut} questions (target 0); did not fit at all: {stat.did_not_fit};"
            f" memory node failed: {stat.memory_failed}."
        )
    console.print(
        RULE + " Scored: the conversation's content in the received prompt (the memory"
        " section's passages and each earlier chat message), not the instructions nor the"
        " question; the baselines fill as many characters as that content takes."
    )


def _counts(console: Console, methods: Mapping[str, MethodScore], result: RecallResult) -> None:
    first = next(iter(methods.values()))
    counts = ", ".join(f"{c}: {len(first.found.get(c, []))}" for c in SCORED_CATEGORIES)
    console.print(
        f"questions scored: {result.questions} ({counts}); category 5 (adversarial) excluded: "
        f"{result.excluded_adversarial}; skipped (no evidence turn): {result.skipped_no_evidence}."
    )
