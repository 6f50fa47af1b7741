"""What the `eko bench …` commands share: finding a suite, its data file, running it.

Suite modules are imported only when their command runs: they pull numpy, the embedder and
the database drivers, which the rest of the CLI must not pay for.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Coroutine
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, TypeVar

import typer
from uvicorn.loops.auto import auto_loop_factory

from eko.cli.common import console, fail, load_settings
from eko.logging import configure_logging
from eko_bench import DATA_DIR, LOCOMO_FILE, QQP_FILE
from eko_bench.data_errors import BenchDataError

LOAD_BACKENDS = {"sqlite": ("sqlite",), "postgres": ("postgres",), "both": ("sqlite", "postgres")}
BACKENDS = ("sqlite", "postgres")

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


def module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        fail(
            f"benchmark module {name!r} is not available: {exc}",
            fix="reinstall the benchmarks: `scripts/setup --dev`, or "
            "`.venv/bin/pip install -e ./bench`",
        )


def data_file(given: Path | None, default_name: str, suite: str) -> Path:
    """The data file to read: the one given, else the default; exits naming it when missing."""
    path = given if given is not None else DATA_DIR / default_name
    if not path.is_file():
        fail(
            f"data file not found: {path} (absolute: {path.resolve()})",
            fix=f"pass `eko bench {suite} --data PATH`, or run from a directory next to "
            f"../shared/data",
        )
    return path


T = TypeVar("T")


def run_on_server_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Run a bench on the event loop `eko serve` runs on: uvicorn's own choice (uvloop when it
    is installed, as uvicorn[standard] installs it). Timings taken on asyncio's default loop
    would charge the server with a loop it does not use."""
    with asyncio.Runner(loop_factory=auto_loop_factory()) as runner:
        return runner.run(coro)


def run_suite(module_name: str, **options: Any) -> None:
    suite = module(module_name)
    settings = load_settings()
    configure_logging("WARNING")
    try:
        run_on_server_loop(suite.run(settings=settings, console=console, **options))
    except BenchDataError as exc:
        fail(
            f"bad data file: {exc}",
            fix="pass a file in the format this bench reads (its `--data` help says which)",
        )
