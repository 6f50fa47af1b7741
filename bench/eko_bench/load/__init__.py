"""`eko bench load`: Eko under concurrent load, through real sockets, on SQLite and PostgreSQL.

Per backend: a fake OpenAI-compatible upstream (fake_upstream.py) and Eko itself (`eko serve`,
eko_server.py) run as processes on 127.0.0.1; the scenarios (scenarios.py) fire bursts at it
and count, from the database, what was stored and answered (records.py); report.py prints the
table. Scenario (d), steady load with 1 and 2 API workers, has its own stack and table
(steady_stack.py, steady_report.py); scenario (e), the real bundled model under K concurrent
users, too (bundled.py: only when asked, it takes minutes). tests/load/ runs the same code and
asserts the counts.

    eko bench load [--backend sqlite|postgres|both] [--scenario a|b|c|d|e] [--latency 0.3]
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from rich.console import Console

from eko_bench.databases import postgres_server
from eko_bench.llm_quality import load_questions
from eko_bench.load.bundled import BundledResult, bundled_table, run_bundled
from eko_bench.load.processes import ServerFailed
from eko_bench.load.report import load_table, notes
from eko_bench.load.scenarios import ScenarioResult
from eko_bench.load.stack import (
    BACKENDS,
    SCENARIOS,
    LoadOptions,
    LoadRunFailed,
    run_backend,
    server_database,
)
from eko_bench.load.steady import SteadyResult
from eko_bench.load.steady_report import steady_table
from eko_bench.load.steady_stack import run_steady

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
            bundled: list[BundledResult] = []
            if "e" in scenarios and not failure:
                try:
                    bundled = await _run_bundled(backend, Path(tmp), options, status.update)
                except ServerFailed as exc:
                    failure = f"{backend}: {exc}"
        steady = [r for r in results if isinstance(r, SteadyResult)]
        others = [r for r in results if not isinstance(r, SteadyResult)]
        if others:
            console.print(load_table(backend, others, latency_s=options.latency_s))
            for line in notes(others):
                console.print(line, highlight=False)
        if steady:
            console.print(steady_table(steady))
        if bundled:
            console.print(bundled_table(bundled))
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
    if set(scenarios) <= {"e"}:
        return []
    if backend != "postgres":
        return await _run_scenarios(backend, workdir, scenarios, options, on_start, None)
    async with postgres_server() as server_url:
        return await _run_scenarios(backend, workdir, scenarios, options, on_start, server_url)


async def _run_scenarios(
    backend: str,
    workdir: Path,
    scenarios: Collection[str],
    options: LoadOptions,
    on_start: Callable[[str], None],
    pg_server_url: str | None,
) -> list[ScenarioResult]:
    """(a)-(c) through run_backend, then (d) through run_steady."""
    results: list[ScenarioResult] = []
    if set(scenarios) - {"d", "e"}:
        results += await run_backend(
            backend,
            workdir=workdir,
            scenarios=scenarios,
            options=options,
            pg_server_url=pg_server_url,
            on_start=on_start,
        )
    if "d" in scenarios:
        try:
            results += await run_steady(
                backend,
                workdir=workdir,
                options=options,
                pg_server_url=pg_server_url,
                on_start=on_start,
            )
        except LoadRunFailed as exc:
            raise LoadRunFailed(str(exc), results + exc.results) from exc
    return results


async def _run_bundled(
    backend: str, workdir: Path, options: LoadOptions, on_start: Callable[[str], None]
) -> list[BundledResult]:
    """(e): the bundled model under K concurrent users, on its own server and database."""
    if backend != "postgres":
        return await _bundled_rounds(backend, workdir, options, on_start, None)
    async with postgres_server() as server_url:
        return await _bundled_rounds(backend, workdir, options, on_start, server_url)


async def _bundled_rounds(
    backend: str,
    workdir: Path,
    options: LoadOptions,
    on_start: Callable[[str], None],
    pg_server_url: str | None,
) -> list[BundledResult]:
    async with server_database(backend, workdir, "bundled", pg_server_url) as url:
        return await run_bundled(
            backend,
            workdir=workdir,
            database_url=url,
            user_counts=options.bundled_users,
            questions=options.bundled_questions,
            timeout_s=options.bundled_timeout_s,
            on_start=on_start,
            items=load_questions(options.bundled_data) if options.bundled_data else None,
        )
