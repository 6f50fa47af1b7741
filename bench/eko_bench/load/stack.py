"""One backend's load run: the fake upstream, an Eko server per provider set, the scenarios.

Scenarios (a) and (b) share a server whose only provider is the fast upstream; (c) gets its
own server (and database) whose primary hangs, with the fast upstream as fallback. Everything
is bounded: each request by `request_timeout_s`, each scenario by `scenario_bound_s`, server
start-up by `start_timeout_s`; every process is stopped on the way out, whatever happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import get_args

from eko_bench.databases import create_database, drop_database
from eko_bench.load.eko_server import EkoServer, child_env, openai_provider
from eko_bench.load.fake_upstream import FakeUpstream
from eko_bench.load.processes import ServerFailed, raise_open_files_limit
from eko_bench.load.scenarios import (
    FALLBACK,
    DuplicateKey,
    ScenarioResult,
    distinct_messages,
    duplicate_posts,
    hung_primary,
)

# d: steady_stack.py, e: bundled.py (the real bundled model; never in the default run), both
# run by eko_bench.load.run
SCENARIOS = ("a", "b", "c", "d", "e")
BACKENDS = ("sqlite", "postgres")


@dataclass(frozen=True)
class LoadOptions:
    latency_s: float = 0.3
    messages: int = 100
    duplicates: int = 1000
    hung_users: int = 16
    # The hung primary's read timeout: what each of its calls costs before the fallback.
    hung_timeout_s: float = 5.0
    # (d) steady load: users posting one after another, for this long.
    steady_users: int = 16
    steady_seconds: float = 20.0
    request_timeout_s: float = 60.0
    # (e) the bundled model: K concurrent users for each K, each posting this many questions.
    bundled_users: tuple[int, ...] = (1, 2, 4, 8)
    bundled_questions: int = 2
    # (e) the questions asked, with their accepted answers (None: everyday_qa_test.jsonl).
    bundled_data: Path | None = None
    bundled_timeout_s: float = 900.0
    settle_s: float = 30.0
    scenario_bound_s: float = 300.0
    start_timeout_s: float = 120.0


class ScenarioTimeout(RuntimeError):
    """A scenario ran past its hard bound."""


class LoadRunFailed(RuntimeError):
    """A server failed to start or a scenario ran past its bound; `results` holds the
    scenarios measured before that."""

    def __init__(self, message: str, results: list[ScenarioResult]) -> None:
        super().__init__(message)
        self.results = results


@asynccontextmanager
async def server_database(
    backend: str, workdir: Path, name: str, pg_server_url: str | None
) -> AsyncIterator[str]:
    """A URL for an empty database of this backend (the server migrates it at start)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{workdir / f'{name}.db'}"
        return
    if pg_server_url is None:
        raise ValueError("the postgres backend needs a PostgreSQL server URL")
    url = await create_database(pg_server_url)
    try:
        yield url
    finally:
        await drop_database(pg_server_url, url)


async def run_backend(
    backend: str,
    *,
    workdir: Path,
    scenarios: Collection[str] = SCENARIOS,
    options: LoadOptions = LoadOptions(),
    pg_server_url: str | None = None,
    on_start: Callable[[str], None] | None = None,
) -> list[ScenarioResult]:
    """Run the chosen scenarios on one backend; `pg_server_url` is needed for postgres."""
    raise_open_files_limit()
    results: list[ScenarioResult] = []
    try:
        await _run_all(backend, workdir, scenarios, options, pg_server_url, on_start, results)
    except (ServerFailed, ScenarioTimeout) as exc:
        raise LoadRunFailed(str(exc), results) from exc
    return results


async def _run_all(
    backend: str,
    workdir: Path,
    scenarios: Collection[str],
    options: LoadOptions,
    pg_server_url: str | None,
    on_start: Callable[[str], None] | None,
    results: list[ScenarioResult],
) -> None:
    """Append each scenario's result to `results` as it completes."""
    say = on_start or (lambda _: None)
    async with FakeUpstream(latency_s=options.latency_s, workdir=workdir, env=child_env()) as up:
        if "a" in scenarios or "b" in scenarios:
            providers = [
                openai_provider("primary", up.fast_base_url, timeout_s=options.request_timeout_s)
            ]
            async with (
                server_database(backend, workdir, "fast", pg_server_url) as url,
                EkoServer(
                    name=f"eko-{backend}-fast",
                    database_url=url,
                    providers=providers,
                    workdir=workdir,
                    start_timeout_s=options.start_timeout_s,
                ) as server,
            ):
                bounds = {"timeout_s": options.request_timeout_s, "settle_s": options.settle_s}
                runs: list[tuple[str, Callable[[], Awaitable[ScenarioResult]]]] = []
                if "a" in scenarios:
                    runs.append(
                        (
                            "a",
                            partial(
                                distinct_messages,
                                server.url,
                                url,
                                messages=options.messages,
                                **bounds,
                            ),
                        )
                    )
                if "b" in scenarios:
                    for kind in get_args(DuplicateKey):
                        runs.append(
                            (
                                f"b ({kind})",
                                partial(
                                    duplicate_posts,
                                    server.url,
                                    url,
                                    key_kind=kind,
                                    requests=options.duplicates,
                                    **bounds,
                                ),
                            )
                        )
                for name, scenario in runs:
                    say(f"{backend}: scenario {name}")
                    results.append(await _observed(scenario, up, server, options))
        if "c" in scenarios:
            providers = [
                openai_provider("primary", up.hung_base_url, timeout_s=options.hung_timeout_s),
                openai_provider(FALLBACK, up.fast_base_url, timeout_s=options.request_timeout_s),
            ]
            async with (
                server_database(backend, workdir, "hung", pg_server_url) as url,
                EkoServer(
                    name=f"eko-{backend}-hung",
                    database_url=url,
                    providers=providers,
                    workdir=workdir,
                    start_timeout_s=options.start_timeout_s,
                ) as server,
            ):
                say(f"{backend}: scenario c")
                results.append(
                    await _observed(
                        partial(
                            hung_primary,
                            server.url,
                            url,
                            users=options.hung_users,
                            timeout_s=options.request_timeout_s,
                            settle_s=options.settle_s,
                        ),
                        up,
                        server,
                        options,
                    )
                )


async def _observed(
    scenario: Callable[[], Awaitable[ScenarioResult]],
    upstream: FakeUpstream,
    server: EkoServer,
    options: LoadOptions,
) -> ScenarioResult:
    """The scenario under its hard bound, with the model calls it caused and, when something
    failed server-side, the end of the server's log."""
    before = await upstream.counts()
    try:
        async with asyncio.timeout(options.scenario_bound_s):
            result = await scenario()
    except TimeoutError as exc:
        raise ScenarioTimeout(
            f"scenario ran past {options.scenario_bound_s:.0f} s; server log:\n{server.log_tail()}"
        ) from exc
    after = await upstream.counts()
    calls = after.served - before.served
    hung = after.hung - before.hung
    result.notes.append(f"model calls {calls}" + (f" (+{hung} hung)" if hung else ""))
    if result.server_errors or result.no_response:
        result.server_log = server.log_tail(30)
    return result
