"""`eko bench …`: the benchmarks of this package, each printing a table (docs/benchmarks.md).

The server never imports this package: eko/cli/bench.py imports `app` when `eko bench` runs.

Suite modules are imported only when their command runs: they pull numpy, the embedder and
the database drivers, which the rest of the CLI must not pay for.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from eko.cli.common import console, fail, load_settings, run
from eko.logging import configure_logging
from eko_bench import LOCOMO_FILE, QQP_FILE, cli_memory, cli_model
from eko_bench import cli_support as support
from eko_bench.cli_support import LOAD_BACKENDS, QqpData
from eko_bench.data_errors import BenchDataError
from eko_bench.llm_quality import load_questions

app = typer.Typer(
    help="Benchmarks (speed, memory, quality, load); each prints a table.", no_args_is_help=True
)

# Suites with no options of their own: module and one-line help.
_SUITES = {
    "vectors": (
        "eko_bench.bench_vectors",
        "vector search p50/p95 at 10k/100k on SQLite and PostgreSQL",
    ),
    "pipeline": (
        "eko_bench.bench_pipeline",
        "chat pipeline overhead per message (10k history, 1k docs chunks), SQLite and PostgreSQL",
    ),
    "signin": (
        "eko_bench.bench_signin",
        "sign-in time: right password, wrong password, unknown name (argon2id, SQLite)",
    ),
    "chain": (
        "eko_bench.bench_chain",
        "reflexive chain vs a 15-turn single loop: turns, model calls, reply (scripted models)",
    ),
}


def _make(name: str, module_name: str, help_text: str) -> None:
    def command() -> None:
        support.run_suite(module_name)

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
        support.run_suite("eko_bench.bench_embed")
        return
    path = support.data_file(data, QQP_FILE, "embed --calibrate")
    module = support.module("eko_bench.bench_embed")
    settings = load_settings()
    configure_logging("WARNING")
    run(module.run_calibration(settings=settings, console=console, data=path, limit=limit))


app.command("llm")(cli_model.llm)
app.command("reply")(cli_model.reply)
app.command("routing")(cli_model.routing)
app.command("language")(cli_model.language)
app.command("grounded")(cli_model.grounded)


@app.command("proactive")
def proactive(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Labelled lobby situations, JSON lines (default: the packaged --split).",
            dir_okay=False,
            exists=True,
        ),
    ] = None,
    split: Annotated[
        str, typer.Option(help="test (never used to write the rules), dev or all.")
    ] = "test",
    days: Annotated[int, typer.Option(min=0, max=30, help="Scripted lobby days.")] = 3,
    model: Annotated[
        str, typer.Option(help="scripted, local (the configured model) or both.")
    ] = "scripted",
    decider: Annotated[
        str, typer.Option(help="The configured model's row: auto, rules or model.")
    ] = "auto",
    limit: Annotated[int | None, typer.Option(min=1, help="Situations to run.")] = None,
) -> None:
    """lobby reflection: calls/day vs budget, rate limits; message-vs-pass precision/recall"""
    if model not in ("scripted", "local", "both"):
        fail(f"unknown model {model!r}", fix="one of: scripted, local, both")
    if split not in ("test", "dev", "all"):
        fail(f"unknown split {split!r}", fix="one of: test, dev, all")
    if decider not in ("auto", "rules", "model"):
        fail(f"unknown decider {decider!r}", fix="one of: auto, rules, model")
    support.run_suite(
        "eko_bench.bench_proactive",
        data=data,
        split=split,
        days=days,
        model=model,
        decider=decider,
        limit=limit,
    )


app.command("context")(cli_memory.context)
app.command("recall")(cli_memory.recall)
app.command("guard")(cli_memory.guard)
app.command("extract")(cli_memory.extract)


@app.command("load")
def load(
    backend: Annotated[
        str, typer.Option(help="sqlite, postgres or both (embedded PostgreSQL by default).")
    ] = "both",
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            help="a: distinct messages in one room; b: identical posts (client_message_id, "
            "Idempotency-Key); c: hung primary provider; d: steady load, 1 and 2 API workers; "
            "e: the bundled model with K concurrent users (real model, minutes: only when "
            "asked). Repeatable; default a-d."
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
    bundled_users: Annotated[
        str, typer.Option(help="(e) concurrent users per round, comma-separated.")
    ] = "1,2,4,8",
    bundled_questions: Annotated[
        int, typer.Option(min=1, help="(e) questions each user posts one after another.")
    ] = 2,
    bundled_data: Annotated[
        Path | None,
        typer.Option(
            help="(e) everyday questions with accepted answers (JSONL, eko bench llm's "
            "format); default bench/eko_bench/data/everyday_qa_test.jsonl."
        ),
    ] = None,
) -> None:
    """Eko under concurrent load through real sockets (fake model, `eko serve` processes)"""
    if backend not in LOAD_BACKENDS:
        fail(f"unknown backend {backend!r}", fix="use sqlite, postgres or both")
    chosen = scenario or ["a", "b", "c", "d"]
    unknown = sorted(set(chosen) - {"a", "b", "c", "d", "e"})
    if unknown:
        fail(f"unknown scenario {', '.join(unknown)}", fix="use a, b, c, d and/or e")
    try:
        user_counts = tuple(int(k) for k in bundled_users.split(",") if k.strip())
    except ValueError:
        fail(f"--bundled-users {bundled_users!r} is not a list of numbers", fix="e.g. 1,2,4,8")
    if not user_counts or min(user_counts) < 1:
        fail("--bundled-users needs at least one count of 1 or more", fix="e.g. 1,2,4,8")
    if bundled_data is not None:
        _check_questions(bundled_data)
    module = support.module("eko_bench.load")
    options = module.LoadOptions(
        latency_s=latency,
        messages=messages,
        duplicates=duplicates,
        hung_users=users,
        hung_timeout_s=hung_timeout,
        steady_users=steady_users,
        steady_seconds=duration,
        request_timeout_s=request_timeout,
        bundled_users=user_counts,
        bundled_questions=bundled_questions,
        bundled_data=bundled_data,
    )
    _run_load(module, LOAD_BACKENDS[backend], set(chosen), options)


def _check_questions(path: Path) -> None:
    """A bad questions file stops the run before any server starts."""
    if not path.is_file():
        fail(f"data file not found: {path}", fix="pass --bundled-data PATH to a JSONL file")
    try:
        load_questions(path)
    except BenchDataError as exc:
        fail(f"bad data file: {exc}", fix='one {"id", "lang", "question", "accept"} per line')


def _run_load(
    module: ModuleType, backends: tuple[str, ...], scenarios: set[str], options: Any
) -> None:
    configure_logging("WARNING")
    failures = run(
        module.run(console=console, backends=backends, scenarios=scenarios, options=options)
    )
    if failures:
        fail(f"the load run did not complete on {len(failures)} backend(s) (see above)")


@app.command("crash")
def crash(
    backend: Annotated[
        str, typer.Option(help="sqlite, postgres or both (embedded PostgreSQL by default).")
    ] = "both",
    rounds: Annotated[int, typer.Option(min=1, help="Rounds per backend.")] = 20,
    messages: Annotated[int, typer.Option(min=1, help="Messages posted at once per round.")] = 50,
    users: Annotated[int, typer.Option(min=1, help="Users posting, one direct room each.")] = 5,
    seed: Annotated[int, typer.Option(help="Seeds the kill moments and the stub's delays.")] = 0,
    settle_s: Annotated[
        float,
        typer.Option("--settle-s", help="After the restart: longest wait for the queue to drain."),
    ] = 60.0,
    kill_until_s: Annotated[
        float | None,
        typer.Option(
            "--kill-until-s",
            help="Kills happen at a random moment between 0.3 s and this many seconds into "
            "the burst (default: 0.2 s per message, at least 1 s).",
        ),
    ] = None,
    kill: Annotated[
        bool, typer.Option("--kill/--no-kill", help="--no-kill: the control, nothing killed.")
    ] = True,
) -> None:
    """kill -9 of eko serve (and of eko worker on PostgreSQL) during bursts: is every
    acknowledged message answered once, with its background jobs? Exit 1 when not."""
    if backend not in LOAD_BACKENDS:
        fail(f"unknown backend {backend!r}", fix="use sqlite, postgres or both")
    module = support.module("eko_bench.crash")
    options = module.CrashOptions(
        rounds=rounds,
        messages=messages,
        users=users,
        seed=seed,
        kill=kill,
        kill_until_s=kill_until_s,
        settle_s=settle_s,
    )
    configure_logging("WARNING")
    try:
        missed = run(module.run(console=console, backends=LOAD_BACKENDS[backend], options=options))
    except module.ServerFailed as exc:
        fail(f"the crash run could not run: {exc}", code=2)
    failed = {name: misses for name, misses in missed.items() if misses}
    if failed:
        summary = "; ".join(f"{name}: {', '.join(misses)}" for name, misses in failed.items())
        fail(f"targets missed ({summary}); each must be 0 (docs/benchmarks.md)")


# `all` runs these first, then any other suite registered in _SUITES.
_ALL = (
    "llm",
    "reply",
    "language",
    "embed",
    "vectors",
    "pipeline",
    "guard",
    "context",
    "recall",
    "load",
)


@app.command("all")
def all_suites(
    skip: Annotated[list[str] | None, typer.Option(help="Suites to skip.")] = None,
) -> None:
    """Run every benchmark in turn, with default options."""
    names = [*_ALL, *(name for name in _SUITES if name not in _ALL)]
    selected = [name for name in names if name not in (skip or [])]
    # Missing data fails now, not after an hour of other suites.
    qqp = support.data_file(None, QQP_FILE, "guard") if "guard" in selected else None
    locomo = (
        support.data_file(None, LOCOMO_FILE, "context")
        if {"context", "recall"} & set(selected)
        else None
    )
    for name in selected:
        console.rule(f"bench {name}")
        if name in _SUITES:
            support.run_suite(_SUITES[name][0])
        elif name == "llm":
            support.run_suite("eko_bench.bench_llm")
        elif name == "reply":
            support.run_suite("eko_bench.bench_reply")
        elif name == "language":
            support.run_suite("eko_bench.bench_language")
        elif name == "embed":
            support.run_suite("eko_bench.bench_embed")
        elif name == "guard":
            support.run_suite("eko_bench.guard", data=qqp)
        elif name == "context":
            support.run_suite("eko_bench.context", data=locomo)
        elif name == "recall":
            support.run_suite("eko_bench.bench_recall", data=locomo)
        elif name == "load":
            module = support.module("eko_bench.load")
            _run_load(module, ("sqlite", "postgres"), {"a", "b", "c", "d"}, module.LoadOptions())


# CLI start-up (`eko bench cli`): added after the loop above, and to _SUITES so `all` runs it.
_SUITES["cli"] = (
    "eko_bench.bench_cli",
    "CLI start-up: eko --help, eko users list, … as processes, median/p95 wall time",
)
_make("cli", *_SUITES["cli"])
