"""`eko bench crash`: is an acknowledged message answered, once, with its background work,
when the server is killed (`kill -9`) in the middle of a burst? (issue #32, item 5)

Per backend: a stub OpenAI-compatible provider (stub_provider.py, also the embedder: no model
loads) runs for the whole run; each round gets a fresh database and its own `eko serve` (plus
`eko worker` on PostgreSQL, where jobs run outside the API process), real sockets, a burst of
posts with client ids from several users (burst.py, post.py), a SIGKILL of each process at a
seeded random moment, a restart, and an audit of the database once the queue drained
(audit.py); report.py prints a row per round and the total. round.py runs one round,
processes.py controls the processes, hooks.py asks Eko which after-reply jobs a reply needs.

    eko bench crash [--backend sqlite|postgres|both] [--rounds 20] [--messages 50] [--seed 0]
                    [--settle-s 60] [--no-kill]
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from rich.console import Console

from eko_bench.crash.hooks import Hook, configured_hooks
from eko_bench.crash.options import BACKENDS, CrashOptions
from eko_bench.crash.report import crash_table, missed_targets, notes
from eko_bench.crash.round import RoundResult, round_settings, run_round
from eko_bench.crash.stub_provider import StubProvider
from eko_bench.databases import postgres_server
from eko_bench.load.eko_server import child_env
from eko_bench.load.processes import ServerFailed, raise_open_files_limit

__all__ = ["BACKENDS", "CrashOptions", "RoundResult", "ServerFailed", "run", "run_backend"]


async def run(
    *, console: Console, backends: Sequence[str] = BACKENDS, options: CrashOptions
) -> dict[str, list[str]]:
    """Every round on each backend, a table per backend; the missed targets per backend
    (empty lists when every target was met)."""
    missed: dict[str, list[str]] = {}
    for backend in backends:
        with console.status(f"{backend}: starting…") as status:
            results = await run_backend(
                backend, options=options, on_round=lambda text: status.update(text)
            )
        console.print(crash_table(backend, results, killed=options.kill))
        for line in notes(results):
            console.print(f"  {line}", highlight=False, markup=False)
        missed[backend] = missed_targets(results)
    return missed


async def run_backend(
    backend: str,
    *,
    options: CrashOptions,
    workdir: Path | None = None,
    pg_server_url: str | None = None,
    on_round: Callable[[str], None] | None = None,
) -> list[RoundResult]:
    """The rounds on one backend. PostgreSQL: `pg_server_url` names a server to create the
    rounds' databases in, else one is started (EKO_BENCH_DATABASE_URL or embedded)."""
    raise_open_files_limit()
    say = on_round or (lambda _: None)
    rng = random.Random(f"{options.seed}:{backend}")
    with _workdir(workdir, backend) as root:
        async with (
            _pg(backend, pg_server_url) as server_url,
            StubProvider(
                workdir=root,
                env=child_env(),
                min_delay_s=options.model_min_delay_s,
                max_delay_s=options.model_max_delay_s,
                seed=options.seed,
            ) as stub,
        ):
            hooks = await _hooks(backend, root, stub.base_url, options, server_url)
            results = []
            for index in range(options.rounds):
                say(f"{backend}: round {index + 1}/{options.rounds}")
                results.append(
                    await run_round(
                        backend,
                        index,
                        workdir=root / f"round-{index + 1}",
                        stub_base_url=stub.base_url,
                        hooks=hooks,
                        rng=rng,
                        options=options,
                        pg_server_url=server_url,
                    )
                )
    return results


async def _hooks(
    backend: str, root: Path, stub_url: str, options: CrashOptions, server_url: str | None
) -> tuple[Hook, ...]:
    """The after-reply hooks of the rounds' server (its settings; no database is opened)."""
    url = server_url if backend == "postgres" and server_url else f"sqlite+aiosqlite:///{root}/x.db"
    env = child_env(round_settings(backend, url, root, stub_url, options))
    return await configured_hooks(env, root)


@contextmanager
def _workdir(given: Path | None, backend: str) -> Iterator[Path]:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given
        return
    with tempfile.TemporaryDirectory(prefix=f"eko-bench-crash-{backend}-") as tmp:
        yield Path(tmp)


@asynccontextmanager
async def _pg(backend: str, given: str | None) -> AsyncIterator[str | None]:
    if backend != "postgres" or given is not None:
        yield given
        return
    async with postgres_server() as url:
        yield url
