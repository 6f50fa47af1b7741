"""`eko bench …`: the entry of the benchmarks, which live in their own package, `eko_bench`.

The benchmarks (bench/ in the repository, distribution `eko-bench`) are not part of the server:
nothing under eko/ imports them but this module, and only when `eko bench` runs. Without them
installed, `eko bench …` exits with an error saying how to install them.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer
from typer.core import TyperGroup

from eko.cli.common import fail

INSTALL_FIX = (
    "install them: `.venv/bin/pip install -e ./bench` from the repository, or `scripts/setup --dev`"
)
MISSING_HELP = (
    "Benchmarks; each prints a table. Not installed here: `.venv/bin/pip install -e ./bench` "
    "(or `scripts/setup --dev`)."
)


class _NotInstalled(TyperGroup):
    """`eko bench` without the benchmarks: `--help` says so, any other use exits with the fix.

    Contexts are typed Any, as in eko/cli/app.py (Typer's Click or Click itself).
    """

    def invoke(self, ctx: Any) -> Any:
        fail("the benchmarks (package eko_bench) are not installed", fix=INSTALL_FIX)


def bench_app() -> typer.Typer:
    """The `eko bench` command group: the benchmarks' own, or one that explains how to get it."""
    try:
        module = importlib.import_module("eko_bench.cli")
    except ModuleNotFoundError as exc:
        if exc.name not in ("eko_bench", "eko_bench.cli"):
            raise  # a dependency of the benchmarks is missing: its own error says which
        missing = typer.Typer(cls=_NotInstalled, invoke_without_command=True)

        @missing.callback(help=MISSING_HELP)
        def not_installed() -> None:
            pass  # never called: _NotInstalled.invoke fails first

        return missing
    app: typer.Typer = module.app
    return app


def __getattr__(name: str) -> Any:
    # eko/cli/app.py reads `app` when `eko bench` is invoked: the import happens then.
    if name == "app":
        return bench_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
