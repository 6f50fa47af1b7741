"""The dual context on LoCoMo: content recall against baselines, size, growth, cost.

Each LoCoMo conversation is loaded as a lobby room (sessions in order, the two speakers as
users, session dates as message times) and its summaries are built session by session, as the
after-reply hook would. Then, for every question, the context is built as the chat path builds
it (query = the question, asked at the end of the conversation) and scored by *content recall*
(content.py: is the evidence's text, or the answer, written in the context?), next to, in the
same run and at the same character budget per question: random past turns, BM25-ranked past
turns (baselines.py), the recent turns alone, an unrelated-context control, and mem0 as a peer
(peer_mem0.py: its raw mode, and its extraction mode with `--summarizer model`). Range coverage
(evidence inside a retrieved summary's span) stays as a secondary, saturating column.

Summaries come, by default, from a deterministic extractive stand-in (summarizer.py: a
FunctionModel quoting the first sentence of evenly spaced turns); `--summarizer model` uses
the configured model, each answer cached on disk under <home>/bench-cache/ by its input's hash
(summary_cache.py). The local model takes minutes per summary on 2 cores: use --limit.
A question needing several pieces gets, on the server, a few phrases from the model
(eko.memory.query_expansion); the bench asks for them only with `--expander model` (the
configured model, cached the same way; ~3 s per list question with the bundled one), and by
default measures the rule alone.

    eko bench context [--data FILE] [--split all|dev|test|dev-q|test-q] [--limit N]
                      [--summarizer model] [--expander model] [--budget N ...]
                      [--provider-budget local|N ...] [--report FILE]

The score is strict (content.py): every evidence turn present within one passage; the answer
string is a secondary column. `--provider-budget local|N` (repeatable) scores instead the
writer's real prompt, as the product renders it and as the reader's prompt budget cuts it
(prompt_recall.py, readers.py): `local` is the bundled model's budget in its own tokens, `N` a
remote provider's budget of N tokens; one row per reader (and per `--budget`, the context
budget memory fills at most), with how many questions lost evidence to the cut.

Splits by conversation: the three of locomo-dev-3.json are "dev" (Eko's defaults were tuned on
them); every other LoCoMo conversation is "test". Splits by question: "dev-q" / "test-q" keep
every conversation and ~70 % / ~30 % of its questions by a stable hash of (conversation id,
question text) (data.py); retrieval is tuned on dev-q only and test-q is never tuned on.
`--budget N` (repeatable) sweeps the single context budget (memory_context_max_chars): one
row per budget for Eko, Eko without facts, random and BM25 (both filling that budget).
`--report FILE` writes one JSON line per scored question: its text, category, answer,
evidence ids, and for each method whether it was found and the context's size.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from eko.config import Settings
from eko.embed import build_embedder
from eko.llm.types import Provider
from eko.memory.relevance import rag_min_score
from eko_bench.context.data import (
    DEV_CONVERSATIONS,
    QUESTION_SPLITS,
    CachedEmbedder,
    load_locomo,
    select_split,
)
from eko_bench.context.peer_mem0 import mem0_peers
from eko_bench.context.prompt_recall import measure_prompts
from eko_bench.context.readers import build_reader
from eko_bench.context.recall import (
    MethodScore,
    RecallResult,
    Variant,
    measure,
    select_questions,
)
from eko_bench.context.recall_tables import print_prompt_recall, print_recall
from eko_bench.context.rooms import extractive_provider, prompt_variants, setup
from eko_bench.context.scoring import summary_levels, summary_ranges
from eko_bench.context.summary_cache import cache_counts, configured_model
from eko_bench.context.tables import print_growth
from eko_bench.databases import fresh_database

__all__ = ["run"]


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path,
    split: str = "all",
    limit: int | None = None,
    summarizer: str = "extractive",
    budgets: Sequence[int] = (),
    backend: str = "sqlite",
    report: Path | None = None,
    expander: str = "none",
    provider_budgets: Sequence[str | int] = (),
) -> None:
    """Measure and print every table; `data` is LoCoMo's JSON (the caller checks it exists);
    `backend`: sqlite or postgres (a fresh database of it, removed afterwards); `report`: a
    JSON-lines file to write, one line per scored question (which method found it);
    `expander`: none (the multi-hop rule alone) or model (the configured model is asked for a
    list question's phrases, as the server does; answers cached on disk); `provider_budgets`:
    "local" or token counts — score the writer's prompt for each reader instead (no growth
    table)."""
    chosen = select_split(load_locomo(data), split)
    if not chosen:
        console.print(f"no conversation of {data} is in the {split!r} split")
        return
    selected = select_questions(chosen, limit)
    used = {c.sample_id for c, _ in selected}
    conversations = [c for c in chosen if c.sample_id in used]
    embedder = CachedEmbedder(build_embedder(settings))
    await embedder.embed(["warm-up"])
    tuned = sorted(used & DEV_CONVERSATIONS)
    if split == "test-q":
        tuned = []  # held-out questions of the dev conversations: never tuned on
    tuning = (
        ("tuned on: " + ", ".join(tuned) if tuned else "none tuned on")
        if split not in QUESTION_SPLITS
        else ("questions tuned on" if split == "dev-q" else "held-out questions, never tuned on")
    )
    console.print(
        f"LoCoMo {data.name}, split {split}: {', '.join(sorted(used))} ({tuning}); "
        f"{len(selected)} questions; embedder {embedder.name}; "
        f"ragMinScore {rag_min_score(settings, embedder)}"
    )
    providers, label = _summarizer(settings, summarizer)
    expanders, expander_label = _expander(settings, expander)
    started = time.perf_counter()
    every = settings.summarize_every_n_chars
    with tempfile.TemporaryDirectory(prefix="eko-bench-context-") as tmp:
        async with fresh_database(backend) as database:
            console.print(
                f"loading rooms on {backend}, summaries every {every:,} chars by {label}…"
            )
            built = await setup(
                settings,
                embedder,
                conversations,
                every,
                Path(tmp),
                providers,
                budgets,
                database=database,
                expander=expanders,
            )
            excluded = sum(1 for c in conversations for q in c.questions if q.category == 5)
            if provider_budgets:
                readers = [await build_reader(settings, spec) for spec in provider_budgets]
                prompt_rows = await prompt_variants(
                    settings, built, embedder, providers, readers, budgets, expanders
                )
                methods, stats, skipped, rows = await measure_prompts(
                    built.rooms, selected, prompt_rows
                )
                for reader in readers:
                    await reader.provider.aclose()
            else:
                ranges = await summary_ranges(built.database)
                variants = [
                    Variant(f"{budget:,} budget", *built.budgets[budget], budget)
                    for budget in budgets
                ]
                peers = await mem0_peers(
                    settings,
                    embedder,
                    conversations,
                    [q.text for _, q in selected],
                    Path(tmp) / "mem0",
                    extraction=summarizer == "model",
                )
                try:
                    result = await measure(built, ranges, selected, variants, peers.peers)
                finally:
                    await peers.aclose()
                result.excluded_adversarial = excluded
            levels = await summary_levels(built.database)
    for provider in [*providers, *expanders]:
        await provider.aclose()
    title = (
        f"Content recall on LoCoMo, {backend} (split {split}: {tuning}; questions asked "
        "at the end; "
        f"summaries by {label}, every {every:,} chars; list questions' phrases by "
        f"{expander_label}, "
        f"{' '.join(f'L{k}:{v}' for k, v in sorted(levels.items()))})"
    )
    if provider_budgets:
        scored = len(rows)
        counts = RecallResult({}, MethodScore(), scored, excluded, skipped, rows)
        print_prompt_recall(console, methods, stats, counts, title=title)
        console.print(f"bench time {time.perf_counter() - started:.0f} s")
        if report is not None:
            write_report(report, rows)
            console.print(f"per-question report: {report} ({len(rows)} lines)")
        return
    print_recall(console, result, title=title)
    for line in peers.lines():
        console.print(line)
    console.print(
        f"summary model calls: {built.summary_calls}; bench time "
        f"{time.perf_counter() - started:.0f} s"
    )
    if summarizer == "model":
        console.print("summary cache: " + cache_counts(providers))
    if expanders:
        console.print("phrase cache: " + cache_counts(expanders))
    print_growth(console, [built])
    if report is not None:
        write_report(report, result.per_question)
        console.print(f"per-question report: {report} ({len(result.per_question)} lines)")


def write_report(path: Path, rows: Sequence[dict[str, object]]) -> None:
    """One JSON object per line; written to a temporary file first, so a failed run never
    leaves half a report where a previous one was."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    partial.replace(path)


def _summarizer(settings: Settings, name: str) -> tuple[list[Provider], str]:
    if name == "model":
        return configured_model(settings, "summaries")
    return [extractive_provider()], "the extractive stand-in (not a model)"


def _expander(settings: Settings, name: str) -> tuple[list[Provider], str]:
    if name == "model":
        return configured_model(settings, "expansions")
    return [], "nobody (the rule alone)"
