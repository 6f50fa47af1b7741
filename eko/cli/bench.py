"""`eko bench …`: benchmarks from bench/, each printing a table (numbers go in the README)."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from eko.cli.common import console, fail, load_settings, run
from eko.logging import configure_logging

app = typer.Typer(
    help="Benchmarks (speed, memory, quality); each prints a table.", no_args_is_help=True
)

_SUITES = {
    "llm": ("bench.bench_llm", "local model tokens/s, plain and JSON-grammar"),
    "embed": ("bench.bench_embed", "embedder sentences/s"),
    "vectors": (
        "bench.bench_vectors",
        "vector search p50/p95 at 10k/100k on SQLite and PostgreSQL",
    ),
    "pipeline": (
        "bench.bench_pipeline",
        "chat pipeline overhead per message (10k history, 1k docs chunks), SQLite and PostgreSQL",
    ),
    "guard": (
        "bench.bench_guard",
        "memory guard on QQP: precision/recall/false hits; lookup p50/p95 at 1k-100k",
    ),
    "context": (
        "bench.bench_context",
        "dual context on LoCoMo: evidence recall, prompt size vs history, summary calls",
    ),
}


def _runner(name: str) -> None:
    module_name, _ = _SUITES[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        fail(
            f"benchmark {name!r} is not available: {exc}",
            fix="run from a source checkout installed with `pip install -e .`",
        )
    settings = load_settings()
    configure_logging("WARNING")
    run(module.run(settings=settings, console=console))


def _make(name: str, help_text: str) -> None:
    def command() -> None:
        _runner(name)

    command.__doc__ = help_text
    app.command(name)(command)


for _name, (_module, _help) in _SUITES.items():
    _make(_name, _help)


@app.command("all")
def all_suites(
    skip: Annotated[list[str] | None, typer.Option(help="Suites to skip.")] = None,
) -> None:
    """Run every benchmark in turn."""
    for name in _SUITES:
        if name not in (skip or []):
            console.rule(f"bench {name}")
            _runner(name)
