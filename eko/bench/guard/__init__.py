"""Memory guard benchmark: answer quality on QQP, false hits, and lookup latency.

Quality (the configured embedder, SQLite): every `text_a` of QQP (qqp-dev-3000.jsonl.gz) is
learned as an entry of one scope through GuardService.learn; every `text_b` is then looked up
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

    eko bench guard [--data ../shared/data/qqp-dev-3000.jsonl.gz]
    eko bench guard --limit 500 --size 1000 --backend sqlite   # quick
    eko bench guard --latency-only

Modules: quality (QQP), contrasts (negation / number / name probes), latency (lookups at
1k-100k), tables (printing).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from eko.bench.guard.latency import BACKENDS, SIZES, embed_latency, measure_latency
from eko.bench.guard.quality import measure_quality
from eko.bench.guard.tables import latency_table, quality_table
from eko.config import Settings
from eko.embed import build_embedder

__all__ = ["BACKENDS", "SIZES", "run"]


async def run(
    *,
    settings: Settings,
    console: Console,
    limit: int | None = None,
    sizes: Sequence[int] = SIZES,
    backends: Sequence[str] = BACKENDS,
    data: Path | None = None,
) -> None:
    """Measure and print; `data` (QQP pairs) is needed unless the quality part is skipped."""
    embedder = build_embedder(settings)
    if data is not None:
        rows, info = await measure_quality(settings, embedder, console, data=data, limit=limit)
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
