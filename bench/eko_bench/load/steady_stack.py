"""Scenario (d) on one backend: a fake upstream, then per API-worker count an Eko server on a
fresh database, the steady load, and the model calls it cost.

SQLite runs one API worker only (`eko serve --workers 2` refuses an SQLite file: it is one
process's); PostgreSQL runs 1 and 2. Each server gets its own database, so the counts of one
run never include another's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from eko_bench.load.eko_server import EkoServer, child_env, openai_provider
from eko_bench.load.fake_upstream import FakeUpstream
from eko_bench.load.processes import ServerFailed, raise_open_files_limit
from eko_bench.load.stack import LoadOptions, LoadRunFailed, server_database
from eko_bench.load.steady import SteadyResult, steady_load


def worker_counts(backend: str) -> tuple[int, ...]:
    """The API worker counts (d) runs on a backend."""
    return (1,) if backend == "sqlite" else (1, 2)


async def run_steady(
    backend: str,
    *,
    workdir: Path,
    options: LoadOptions = LoadOptions(),
    pg_server_url: str | None = None,
    on_start: Callable[[str], None] | None = None,
    workers: tuple[int, ...] | None = None,
) -> list[SteadyResult]:
    """(d) for each worker count; raises LoadRunFailed (with the runs done) when a server
    does not start or a run passes its bound."""
    raise_open_files_limit()
    say = on_start or (lambda _: None)
    results: list[SteadyResult] = []
    bound_s = options.steady_seconds + options.request_timeout_s + options.settle_s + 60.0
    try:
        async with FakeUpstream(
            latency_s=options.latency_s, workdir=workdir, env=child_env()
        ) as upstream:
            providers = [
                openai_provider(
                    "primary", upstream.fast_base_url, timeout_s=options.request_timeout_s
                )
            ]
            for count in workers or worker_counts(backend):
                say(f"{backend}: scenario d, {count} API worker(s)")
                async with (
                    server_database(backend, workdir, f"steady-{count}", pg_server_url) as url,
                    EkoServer(
                        name=f"eko-{backend}-steady-{count}",
                        database_url=url,
                        providers=providers,
                        workdir=workdir,
                        settings={"EKO_WORKERS": str(count)},
                        start_timeout_s=options.start_timeout_s,
                    ) as server,
                ):
                    before = await upstream.counts()
                    try:
                        async with asyncio.timeout(bound_s):
                            result = await steady_load(
                                server.url,
                                url,
                                backend=backend,
                                workers=count,
                                users=options.steady_users,
                                duration_s=options.steady_seconds,
                                latency_s=options.latency_s,
                                timeout_s=options.request_timeout_s,
                                settle_s=options.settle_s,
                            )
                    except TimeoutError as exc:
                        raise LoadRunFailed(
                            f"scenario d ({count} workers) ran past {bound_s:.0f} s; server "
                            f"log:\n{server.log_tail()}",
                            list(results),
                        ) from exc
                    after = await upstream.counts()
                    result.model_calls = after.served - before.served
                    result.hung_calls = after.hung - before.hung
                    if result.server_errors or result.no_response:
                        result.server_log = server.log_tail(30)
                    results.append(result)
    except ServerFailed as exc:
        raise LoadRunFailed(str(exc), list(results)) from exc
    return results
