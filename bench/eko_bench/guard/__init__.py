"""Memory guard benchmark: honest answer quality (held-out split, known-wrong rate, per
language, modes, judge) and lookup latency.

Quality (the configured embedder; on each `--backend`, default both, figures per backend and
whether both found the same candidates): each set of pairs — the QQP-format file (`--data`,
default the shared QQP dev set) and the French set written for the guard
(bench/eko_bench/data/guard_fr_pairs.jsonl) — is learned into its own scope (every distinct
`text_a`) and every `text_b` is looked up through GuardService (quality.py). The serving rule
is then replayed for a threshold grid, the shipped modes and baselines (metrics.py,
report.py). Every operating point is chosen on the `dev` split; `test` (a stable ~30% of
pairs, by hash) is never tuned on and both are printed. Identical-text pairs and asked texts
stored as is are excluded (the exact key serves them) and counted apart, as are the pairs the
guard refuses (a junk question such as "Ok" or "A", a statement: skipped, counted by refusal).

What each rule served, per split: served pairs the data labels not-duplicate (the wrong-serve
count any labelled file gives), served pairs answered by another stored question than the
pair's own, precision, recall, and, one column among others, the pairs of the hand-checked
known-wrong list (bench/eko_bench/data/guard_known_wrong.jsonl; it cannot see a wrong serve
on new data). The "always serve the nearest" and "exact text only" baselines are measured on
the same pairs. The served pairs of the shipped modes that are labelled not-duplicate or
answered by another question are written to `--wrong-out` (wrong_out.py) for reading.

GPTCache as a peer (peer_gptcache.py): the same pairs and embedder vectors through GPTCache's
own stores and evaluations, at its default threshold and at one chosen on dev; its rows join
the modes table (skipped with a printed line when gptcache is not installed).

Judge (`--judge`): grey-band candidates of the test split sent to the configured chat model
(judged.py); its verdicts replayed as the judge mode.

Families (families.py): the trap and paraphrase families of the verifier, per family and
language, dev file and held-out file, with the baselines; `--families PATH` runs only them, on
any file of that format.

Lookup (`--lookup`, latency.py): 1k-100k entries on SQLite and PostgreSQL.

A hit through the API (`--api`, api.py): a real `eko serve`, exact and semantic hits posted as
messages, p50/p95 against the 30 ms target, with the embedder and the lookup timed in-process.

    eko bench guard [--data PATH] [--split dev|test|all]   # quality, then lookup latency
    eko bench guard --quality-only --limit 500 --wrong-out /tmp/wrong.jsonl
    eko bench guard --quality-only --judge --judge-sample 80
    eko bench guard --lookup                                 # latency only
    eko bench guard --quality-only --backend postgres        # one backend
    eko bench guard --api --api-hits 100                     # a cache hit through the API
    eko bench guard --families my_pairs.jsonl                # families only, any such file
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from eko.config import Settings
from eko.config.guard import GuardMode
from eko.embed import build_embedder
from eko.guard.language import detect_language
from eko.guard.modes import GuardPolicy, build_policy
from eko_bench.guard.api import run_api
from eko_bench.guard.backends import agreement_line, compare
from eko_bench.guard.families import DEFAULT_FAMILIES, print_families
from eko_bench.guard.latency import BACKENDS, SIZES, run_lookup
from eko_bench.guard.metrics import Config, figures, measured
from eko_bench.guard.pairs import FR_PAIRS, CachedEmbedder, cache_path, load_known_wrong, load_pairs
from eko_bench.guard.peer_gptcache import gptcache_rows
from eko_bench.guard.quality import Asked, look_up_all
from eko_bench.guard.report import Row, run_report
from eko_bench.guard.tables import grid_table, judge_table, language_table, modes_table
from eko_bench.guard.wrong_out import DEFAULT_WRONG_OUT, write_wrong

__all__ = ["BACKENDS", "SIZES", "run"]
MODES: tuple[GuardMode, ...] = ("strict", "balanced", "judge")


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path | None = None,
    limit: int | None = None,
    split: str = "all",
    judge: bool = False,
    judge_sample: int = 80,
    lookup: bool = True,
    sizes: Sequence[int] = SIZES,
    backends: Sequence[str] = BACKENDS,
    wrong_out: Path = DEFAULT_WRONG_OUT,
    api: bool = False,
    api_hits: int = 100,
    api_entries: int = 150,
    families: Sequence[Path] | None = None,
) -> None:
    """Measure and print; `data` None skips the quality part, `lookup` False the latency;
    `api` measures only a cache hit through the API (on the pairs of `data`); `families`
    measures only those families files."""
    if families is not None:
        await _families(settings, console, families)
        return
    if api:
        if data is None:
            raise ValueError("--api needs a data file")
        await run_api(
            settings=settings,
            console=console,
            data=data,
            backends=backends,
            hits=api_hits,
            entries=api_entries,
        )
        return
    if data is not None:
        await _quality(
            settings, console, data, limit, split, judge, judge_sample, backends, wrong_out
        )
    if lookup:
        await run_lookup(settings=settings, console=console, sizes=sizes, backends=backends)


async def _quality(
    settings: Settings,
    console: Console,
    data: Path,
    limit: int | None,
    split: str,
    judge: bool,
    judge_sample: int,
    backends: Sequence[str],
    wrong_out: Path,
) -> None:
    embedder = build_embedder(settings)
    cached = CachedEmbedder(embedder, cache_path(settings.home, embedder.name))
    sets = {"data": load_pairs(data, limit), "fr": load_pairs(FR_PAIRS)}
    known_wrong = load_known_wrong()
    policies = {
        mode: build_policy(
            mode, embedder=embedder.name, calibrated_threshold=float(cached.calibrated_threshold)
        )
        for mode in MODES
    }
    splits = ("dev", "test") if split == "all" else (split,)
    by_backend: dict[str, dict[str, list[Asked]]] = {}
    peer: tuple[list[Row], str] | None = None  # GPTCache's rows, made once (peer_gptcache.py)
    wrong_out.parent.mkdir(parents=True, exist_ok=True)
    with wrong_out.open("w", encoding="utf-8") as wrong_file:
        for backend in backends:
            console.print(
                f"[dim]{backend}: embedding and looking up "
                f"{sum(map(len, sets.values())):,} pairs…[/dim]"
            )
            asked, timings = await look_up_all(settings, cached, sets, backend)
            by_backend[backend] = asked
            report = run_report(asked, known_wrong, policies)
            if peer is None:
                peer = await gptcache_rows(
                    asked, cached, report, known_wrong, default_mode=settings.guard_mode
                )
                console.print(f"[dim]{peer[1]}[/dim]")
            report.baselines.extend(peer[0])
            for name in asked:
                console.print(grid_table(report, name, splits, backend))
            console.print(modes_table(report, splits, backend))
            written = write_wrong(wrong_file, report, backend)
            console.print(
                f"[dim]{backend}: {written} served pairs of the shipped modes labelled "
                f"not-duplicate or answered by another question written to {wrong_out}[/dim]"
            )
            languages = language_table([*report.shipped, *report.baselines], backend)
            if languages is not None:
                console.print(languages)
            console.print(
                f"[dim]{backend}: embedder {embedder.name}; {int(timings['embedded']):,} texts "
                f"embedded ({timings['embed_s']:.0f} s, the rest from the cache); quality run "
                f"{timings['total_s']:.0f} s[/dim]"
            )
    # The judge mode's grey band needs the model: the families table shows the other modes.
    no_judge: dict[str, GuardPolicy] = {
        mode: policy for mode, policy in policies.items() if mode != "judge"
    }
    await print_families(console, cached, no_judge, DEFAULT_FAMILIES)
    first, *others = backends
    console.print(_detector_line(by_backend[first]))
    for backend in others:
        agreement = compare(by_backend[first], by_backend[backend])
        console.print(agreement_line(backend, first, agreement))
    if judge:
        await _judge(
            settings,
            console,
            by_backend[first]["data"],
            policies["judge"],
            known_wrong,
            judge_sample,
        )
    aclose = getattr(embedder, "aclose", None)
    if aclose is not None:
        await aclose()


async def _families(settings: Settings, console: Console, paths: Sequence[Path]) -> None:
    embedder = build_embedder(settings)
    cached = CachedEmbedder(embedder, cache_path(settings.home, embedder.name))
    threshold = float(cached.calibrated_threshold)
    policies: dict[str, GuardPolicy] = {
        mode: build_policy(mode, embedder=embedder.name, calibrated_threshold=threshold)
        for mode in ("strict", "balanced")
    }
    await print_families(console, cached, policies, paths)
    aclose = getattr(embedder, "aclose", None)
    if aclose is not None:
        await aclose()


def _detector_line(asked: dict[str, list[Asked]]) -> str:
    parts = []
    for name, items in asked.items():
        questions = {q for a in items for q in (a.pair.text_a, a.pair.text_b)}
        expected = items[0].pair.lang if items and items[0].pair.lang else "en"
        hits = sum(detect_language(q) == expected for q in questions)
        parts.append(f"{name}: {hits}/{len(questions)} detected {expected}")
    return "language detector (eko/guard/language.py): " + "; ".join(parts)


async def _judge(
    settings: Settings,
    console: Console,
    asked: list[Asked],
    policy: GuardPolicy,
    known_wrong: frozenset[tuple[str, str]],
    limit: int,
) -> None:
    from eko.guard.judge import GuardJudge
    from eko.llm.runtime import LLMRuntime
    from eko.prompts.library import PromptLibrary
    from eko_bench.guard.judged import run_judge

    runtime = LLMRuntime.from_settings(settings)
    try:
        config = Config(
            "mode judge", dict(policy.thresholds), judge_floors=dict(policy.judge_floors)
        )
        judge = GuardJudge(runtime, PromptLibrary(), timeout_s=settings.guard_judge_timeout_s)
        model = runtime.providers[0].name
        run = await run_judge(
            judge, model, measured(asked), config, known_wrong=known_wrong, limit=limit
        )
    finally:
        await runtime.aclose()
    console.print(judge_table(run))
    test = [a for a in measured(asked) if a.pair.split == "test"]
    for label, verdicts in (("balanced (no judge)", None), ("judge (sampled verdicts)", run)):
        replay = Config(
            label,
            dict(policy.thresholds),
            judge_floors=dict(policy.judge_floors),
            verdicts=None if verdicts is None else verdicts.verdicts,
        )
        result = figures(test, replay, known_wrong=known_wrong)
        console.print(
            f"test split, {label}: served {result.served_rate:.1%}, precision "
            f"{result.precision:.3f}, recall {result.recall:.3f}, known-wrong "
            f"{result.known_wrong_rate:.2%} ({result.known_wrong}); judge calls per hit "
            f"{(run.asked / max(result.served, 1)) if verdicts else 0:.2f}"
        )
