"""`eko bench …`: the benchmarks of eko/bench/, each printing a table (numbers go in the README).

Suite modules are imported only when their command runs: they pull numpy, the embedder and
the database drivers, which the rest of the CLI must not pay for.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from eko.bench import DATA_DIR, LOCOMO_FILE, QQP_FILE
from eko.cli.common import console, fail, load_settings, run
from eko.logging import configure_logging

app = typer.Typer(
    help="Benchmarks (speed, memory, quality, load); each prints a table.", no_args_is_help=True
)

# Suites with no options of their own: module and one-line help.
_SUITES = {
    "vectors": (
        "eko.bench.bench_vectors",
        "vector search p50/p95 at 10k/100k on SQLite and PostgreSQL",
    ),
    "pipeline": (
        "eko.bench.bench_pipeline",
        "chat pipeline overhead per message (10k history, 1k docs chunks), SQLite and PostgreSQL",
    ),
    "chain": (
        "eko.bench.bench_chain",
        "reflexive chain vs a 15-turn single loop: turns, model calls, reply (scripted models)",
    ),
}
_LOAD_BACKENDS = {"sqlite": ("sqlite",), "postgres": ("postgres",), "both": ("sqlite", "postgres")}
_GUARD_BACKENDS = ("sqlite", "postgres")

_RELATIVE = "relative to the current directory"
LocomoData = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help=f"LoCoMo JSON (default: {DATA_DIR / LOCOMO_FILE}, {_RELATIVE}).",
        dir_okay=False,
    ),
]
QqpData = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help=f"QQP pairs, .jsonl.gz (default: {DATA_DIR / QQP_FILE}, {_RELATIVE}).",
        dir_okay=False,
    ),
]


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        fail(
            f"benchmark module {name!r} is not available: {exc}",
            fix="reinstall Eko (`scripts/setup` or `pip install -e .`)",
        )


def _data_file(given: Path | None, default_name: str, suite: str) -> Path:
    """The data file to read: the one given, else the default; exits naming it when missing."""
    path = given if given is not None else DATA_DIR / default_name
    if not path.is_file():
        fail(
            f"data file not found: {path} (absolute: {path.resolve()})",
            fix=f"pass `eko bench {suite} --data PATH`, or run from a directory next to "
            f"../shared/data",
        )
    return path


def _run_suite(module_name: str, **options: Any) -> None:
    module = _module(module_name)
    settings = load_settings()
    configure_logging("WARNING")
    run(module.run(settings=settings, console=console, **options))


def _make(name: str, module_name: str, help_text: str) -> None:
    def command() -> None:
        _run_suite(module_name)

    command.__doc__ = help_text
    app.command(name)(command)


for _name, (_module_name, _help) in _SUITES.items():
    _make(_name, _module_name, _help)


@app.command("embed")
def embed(
    calibrate: Annotated[
        bool, typer.Option("--calibrate", help="Calibrate the threshold on QQP pairs instead.")
    ] = False,
    data: QqpData = None,
    limit: Annotated[int | None, typer.Option(help="Calibration: QQP pairs to use.")] = None,
) -> None:
    """embedder sentences/s (or, with --calibrate, its threshold on labelled QQP pairs)"""
    if not calibrate:
        _run_suite("eko.bench.bench_embed")
        return
    path = _data_file(data, QQP_FILE, "embed --calibrate")
    module = _module("eko.bench.bench_embed")
    settings = load_settings()
    configure_logging("WARNING")
    run(module.run_calibration(settings=settings, console=console, data=path, limit=limit))


@app.command("llm")
def llm(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Question set, JSON lines (default: the packaged everyday set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    model: Annotated[
        list[str] | None, typer.Option(help="A bundled model (repeatable; default: all).")
    ] = None,
) -> None:
    """local chat models: answer quality (FR/EN), orchestrator JSON, tokens/s, answer time"""
    _run_suite("eko.bench.bench_llm", data=data, models=model)


@app.command("reply")
def reply(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Question set, JSON lines (default: the packaged everyday set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=2, help="Questions to post.")] = 12,
    compare_cache: Annotated[
        bool, typer.Option("--compare-cache", help="Run again without the prompt cache.")
    ] = False,
    compare_contract: Annotated[
        bool,
        typer.Option(
            "--compare-contract", help="Run again with the orchestrator's full (seed) contract."
        ),
    ] = False,
    long_message: Annotated[
        bool, typer.Option(help="Also post one 6,000-character message.")
    ] = True,
) -> None:
    """the whole reply with the local model while background work is queued: median/p95 s"""
    _run_suite(
        "eko.bench.bench_reply",
        data=data,
        limit=limit,
        compare_cache=compare_cache,
        compare_contract=compare_contract,
        long_message=long_message,
    )


@app.command("proactive")
def proactive(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Labelled lobby situations, JSON lines (default: the packaged set).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    days: Annotated[int, typer.Option(min=0, max=30, help="Scripted lobby days.")] = 3,
    model: Annotated[
        str, typer.Option(help="scripted, local (the configured model) or both.")
    ] = "scripted",
    limit: Annotated[int | None, typer.Option(min=1, help="Situations to run.")] = None,
) -> None:
    """lobby reflection: calls/day vs budget, rate limits; message-vs-pass precision/recall"""
    if model not in ("scripted", "local", "both"):
        fail(f"unknown model {model!r}", fix="one of: scripted, local, both")
    _run_suite("eko.bench.bench_proactive", data=data, days=days, model=model, limit=limit)


@app.command("context")
def context(
    data: LocomoData = None,
    split: Annotated[
        str, typer.Option(help="Conversations: all, dev (tuned on) or test (never tuned on).")
    ] = "all",
    limit: Annotated[
        int | None, typer.Option(min=1, help="Questions to score (default: all).")
    ] = None,
    summarizer: Annotated[
        str,
        typer.Option(
            help="extractive (deterministic stand-in) or model (the configured model, "
            "answers cached under <home>/bench-cache/)."
        ),
    ] = "extractive",
) -> None:
    """dual context on LoCoMo: content recall vs random and BM25 baselines, sizes, growth"""
    if split not in ("all", "dev", "test"):
        fail(f"unknown split {split!r}", fix="use all, dev or test")
    if summarizer not in ("extractive", "model"):
        fail(f"unknown summarizer {summarizer!r}", fix="use extractive or model")
    _run_suite(
        "eko.bench.context",
        data=_data_file(data, LOCOMO_FILE, "context"),
        split=split,
        limit=limit,
        summarizer=summarizer,
    )


@app.command("guard")
def guard(
    data: QqpData = None,
    limit: Annotated[
        int | None, typer.Option(help="Pairs of the file to use (default: all).")
    ] = None,
    split: Annotated[
        str, typer.Option(help="Figures of dev, test (held out, never tuned on) or all.")
    ] = "all",
    judge: Annotated[
        bool, typer.Option("--judge", help="Send grey-band test candidates to the chat model.")
    ] = False,
    judge_sample: Annotated[
        int, typer.Option(help="Grey-band candidates the judge is asked about.")
    ] = 80,
    sizes: Annotated[
        list[int] | None, typer.Option("--size", help="Latency: entries (repeatable).")
    ] = None,
    backend: Annotated[
        list[str] | None,
        typer.Option(help="Latency: sqlite and/or postgres (repeatable; default both)."),
    ] = None,
    lookup: Annotated[
        bool,
        typer.Option("--lookup", "--latency-only", help="Only the lookup latency (no data)."),
    ] = False,
    quality_only: Annotated[
        bool, typer.Option("--quality-only", help="Skip the lookup latency part.")
    ] = False,
) -> None:
    """memory guard: precision/recall/known-wrong on a held-out split, modes, judge; lookups"""
    unknown = sorted(set(backend or []) - set(_GUARD_BACKENDS))
    if unknown:
        fail(f"unknown backend {', '.join(unknown)}", fix="use sqlite and/or postgres")
    if split not in ("all", "dev", "test"):
        fail(f"unknown split {split!r}", fix="use all, dev or test")
    if judge_sample < 1:
        fail("--judge-sample must be at least 1")
    options: dict[str, Any] = {
        "limit": limit,
        "split": split,
        "judge": judge,
        "judge_sample": judge_sample,
        "data": None if lookup else _data_file(data, QQP_FILE, "guard"),
        "lookup": not quality_only,
    }
    if sizes:
        options["sizes"] = sizes
    if backend:
        options["backends"] = backend
    _run_suite("eko.bench.guard", **options)


@app.command("load")
def load(
    backend: Annotated[
        str, typer.Option(help="sqlite, postgres or both (embedded PostgreSQL by default).")
    ] = "both",
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            help="a: distinct messages in one room; b: identical posts (client_message_id, "
            "Idempotency-Key); c: hung primary provider; d: steady load, 1 and 2 API workers. "
            "Repeatable; default all."
        ),
    ] = None,
    latency: Annotated[float, typer.Option(help="Fake model latency, seconds.")] = 0.3,
    messages: Annotated[int, typer.Option(help="(a) concurrent distinct messages.")] = 100,
    duplicates: Annotated[int, typer.Option(help="(b) concurrent identical posts.")] = 1000,
    users: Annotated[int, typer.Option(help="(c) concurrent users, one room each.")] = 16,
    steady_users: Annotated[
        int, typer.Option(help="(d) users posting one after another, one room each.")
    ] = 16,
    duration: Annotated[float, typer.Option(help="(d) seconds each user keeps posting.")] = 20.0,
    hung_timeout: Annotated[
        float, typer.Option(help="(c) the hung primary's timeout_s, seconds.")
    ] = 5.0,
    request_timeout: Annotated[
        float, typer.Option(help="Client timeout per request, seconds.")
    ] = 60.0,
) -> None:
    """Eko under concurrent load through real sockets (fake model, `eko serve` processes)"""
    if backend not in _LOAD_BACKENDS:
        fail(f"unknown backend {backend!r}", fix="use sqlite, postgres or both")
    chosen = scenario or ["a", "b", "c", "d"]
    unknown = sorted(set(chosen) - {"a", "b", "c", "d"})
    if unknown:
        fail(f"unknown scenario {', '.join(unknown)}", fix="use a, b, c and/or d")
    module = _module("eko.bench.load")
    options = module.LoadOptions(
        latency_s=latency,
        messages=messages,
        duplicates=duplicates,
        hung_users=users,
        hung_timeout_s=hung_timeout,
        steady_users=steady_users,
        steady_seconds=duration,
        request_timeout_s=request_timeout,
    )
    _run_load(module, _LOAD_BACKENDS[backend], set(chosen), options)


def _run_load(
    module: ModuleType, backends: tuple[str, ...], scenarios: set[str], options: Any
) -> None:
    configure_logging("WARNING")
    failures = run(
        module.run(console=console, backends=backends, scenarios=scenarios, options=options)
    )
    if failures:
        fail(f"the load run did not complete on {len(failures)} backend(s) (see above)")


# `all` runs these first, then any other suite registered in _SUITES.
_ALL = ("llm", "reply", "embed", "vectors", "pipeline", "guard", "context", "load")


@app.command("all")
def all_suites(
    skip: Annotated[list[str] | None, typer.Option(help="Suites to skip.")] = None,
) -> None:
    """Run every benchmark in turn, with default options."""
    names = [*_ALL, *(name for name in _SUITES if name not in _ALL)]
    selected = [name for name in names if name not in (skip or [])]
    # Missing data fails now, not after an hour of other suites.
    qqp = _data_file(None, QQP_FILE, "guard") if "guard" in selected else None
    locomo = _data_file(None, LOCOMO_FILE, "context") if "context" in selected else None
    for name in selected:
        console.rule(f"bench {name}")
        if name in _SUITES:
            _run_suite(_SUITES[name][0])
        elif name == "llm":
            _run_suite("eko.bench.bench_llm")
        elif name == "reply":
            _run_suite("eko.bench.bench_reply")
        elif name == "embed":
            _run_suite("eko.bench.bench_embed")
        elif name == "guard":
            _run_suite("eko.bench.guard", data=qqp)
        elif name == "context":
            _run_suite("eko.bench.context", data=locomo)
        elif name == "load":
            module = _module("eko.bench.load")
            _run_load(module, ("sqlite", "postgres"), {"a", "b", "c", "d"}, module.LoadOptions())


# CLI start-up (`eko bench cli`): added after the loop above, and to _SUITES so `all` runs it.
_SUITES["cli"] = (
    "eko.bench.bench_cli",
    "CLI start-up: eko --help, eko users list, … as processes, median/p95 wall time",
)
_make("cli", *_SUITES["cli"])
