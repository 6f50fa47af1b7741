"""`eko bench load`: Eko under concurrent load, through real sockets, on SQLite and PostgreSQL.

Per backend: a fake OpenAI-compatible upstream (fake_upstream.py) and Eko itself (`eko serve`,
eko_server.py) run as processes on 127.0.0.1; the scenarios (scenarios.py) fire bursts at it
and count, from the database, what was stored and answered (records.py); report.py prints the
table. tests/load/ runs the same code and asserts the counts.

    eko bench load [--backend sqlite|postgres|both] [--scenario a|b|c] [--latency 0.3]
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from rich.console import Console

from eko.bench.databases import postgres_server
from eko.bench.load.report import load_table, notes
from eko.bench.load.scenarios import ScenarioResult
from eko.bench.load.stack import BACKENDS, SCENARIOS, LoadOptions, LoadRunFailed, run_backend

__all__ = ["BACKENDS", "SCENARIOS", "LoadOptions", "run", "run_backend"]


async def run(
    *,
    console: Console,
    backends: Sequence[str] = BACKENDS,
    scenarios: Collection[str] = SCENARIOS,
    options: LoadOptions = LoadOptions(),
) -> list[str]:
    """Run the scenarios on each backend in turn, printing one table per backend; the failures
    (a server that did not start, a scenario past its bound), empty when all ran."""
    failures = []
    for backend in backends:
        with (
            tempfile.TemporaryDirectory(prefix=f"eko-bench-load-{backend}-") as tmp,
            console.status(f"{backend}: starting the fake upstream and Eko…") as status,
        ):
            try:
                results = await _run_one(backend, Path(tmp), scenarios, options, status.update)
                failure = ""
            except LoadRunFailed as exc:
                results, failure = exc.results, f"{backend}: {exc}"
        console.print(load_table(backend, results, latency_s=options.latency_s))
        for line in notes(results):
            console.print(line, highlight=False)
        for result in results:
            if result.server_log:
                console.print(f"[dim]server log after {result.label}:[/dim]\n{result.server_log}")
        if failure:
            console.print("[red]failed:[/red]", end=" ")
            console.print(failure, highlight=False, markup=False)
            failures.append(failure)
    return failures


async def _run_one(
    backend: str,
    workdir: Path,
    scenarios: Collection[str],
    options: LoadOptions,
    on_start: Callable[[str], None],
) -> list[ScenarioResult]:
    if backend != "postgres":
        return await run_backend(
            backend, workdir=workdir, scenarios=scenarios, options=options, on_start=on_start
        )
    async with postgres_server() as server_url:
        return await run_backend(
            backend,
            workdir=workdir,
            scenarios=scenarios,
            options=options,
            pg_server_url=server_url,
            on_start=on_start,
        )
