"""One crash round: a fresh database, Eko started, a burst with kill -9s, a restart, the audit.

1. a new database (an SQLite file in the round's directory, or a new database in the
   PostgreSQL server), migrated by `eko serve` as it starts (plus `eko worker` on PostgreSQL);
2. users and their direct rooms;
3. the burst; the server is SIGKILLed at a random moment in the kill window (and, on
   PostgreSQL, the worker at another);
4. the same processes started again on the same database and port (nothing is re-posted);
5. the audit once the queue has drained and the counts settled (bounded by settle_s).

With `kill=False` (the control), steps 3's kills and 4 are skipped.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from eko_bench.crash.audit import RoundCounts, settled_audit
from eko_bench.crash.burst import Kill, burst_posts, run_burst
from eko_bench.crash.hooks import Hook
from eko_bench.crash.options import CrashOptions
from eko_bench.crash.processes import EkoProcesses, eko_settings
from eko_bench.databases import create_database, drop_database
from eko_bench.load.client import create_direct_room
from eko_bench.load.records import create_pro_users

_NOTABLE_LEVELS = frozenset({"warning", "error", "critical", "exception"})


@dataclass
class RoundResult:
    backend: str
    index: int
    counts: RoundCounts
    # Seconds into the burst at which each process was killed ("server", "worker").
    kills: dict[str, float] = field(default_factory=dict)
    burst_s: float = 0.0
    # When the first and the last reply reached the client, seconds into the burst (None: no
    # reply did): where the kill fell against the answers.
    first_reply_s: float | None = None
    last_reply_s: float | None = None
    settle_s: float = 0.0
    round_s: float = 0.0
    # Warnings and errors the processes logged after the restart: event name → lines.
    restart_log: Counter[str] = field(default_factory=Counter)


@asynccontextmanager
async def round_database(
    backend: str, workdir: Path, pg_server_url: str | None
) -> AsyncIterator[str]:
    """A URL for an empty database (the server migrates it as it starts)."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{workdir / 'eko.db'}"
        return
    if pg_server_url is None:
        raise ValueError("the postgres backend needs a PostgreSQL server URL")
    url = await create_database(pg_server_url)
    try:
        yield url
    finally:
        await drop_database(pg_server_url, url)


def round_settings(
    backend: str, database_url: str, workdir: Path, stub_base_url: str, options: CrashOptions
) -> dict[str, str]:
    return eko_settings(
        database_url=database_url,
        stub_base_url=stub_base_url,
        home=workdir / "home",
        separate_worker=backend == "postgres",
        request_timeout_s=options.request_timeout_s,
    )


def plan_kills(processes: EkoProcesses, rng: random.Random, options: CrashOptions) -> list[Kill]:
    if not options.kill:
        return []

    def moment() -> float:
        return rng.uniform(*options.kill_window)

    kills = [Kill("server", moment(), processes.kill_server)]
    if processes.worker is not None:
        kills.append(Kill("worker", moment(), processes.kill_worker))
    return kills


def notable_events(paths: list[Path]) -> Counter[str]:
    """Warning and error events in JSON-lines logs, by event name (non-JSON lines: tracebacks
    and prints, counted as "(text)" when they look like errors)."""
    events: Counter[str] = Counter()
    for path in paths:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                if "Traceback" in line or "Error" in line:
                    events["(text)"] += 1
                continue
            if isinstance(record, dict) and str(record.get("level")) in _NOTABLE_LEVELS:
                events[str(record.get("event"))] += 1
    return events


async def run_round(
    backend: str,
    index: int,
    *,
    workdir: Path,
    stub_base_url: str,
    hooks: tuple[Hook, ...],
    rng: random.Random,
    options: CrashOptions,
    pg_server_url: str | None = None,
) -> RoundResult:
    began = time.perf_counter()
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    async with round_database(backend, workdir, pg_server_url) as database_url:
        processes = EkoProcesses(
            settings=round_settings(backend, database_url, workdir, stub_base_url, options),
            workdir=workdir,
            separate_worker=backend == "postgres",
            start_timeout_s=options.start_timeout_s,
        )
        try:
            await processes.start()
            keys = await create_pro_users(
                database_url, [f"crash-{index}-{u}" for u in range(options.users)]
            )
            rooms = [
                (
                    await create_direct_room(
                        processes.url, key, timeout_s=options.request_timeout_s
                    ),
                    key,
                )
                for key in keys
            ]
            posts = burst_posts(
                rooms, messages=options.messages, round_tag=f"{rng.getrandbits(32):08x}"
            )
            kills = plan_kills(processes, rng, options)
            burst_began = time.perf_counter()
            results, fired = await run_burst(
                processes.url, posts, timeout_s=options.request_timeout_s, kills=kills
            )
            burst_s = time.perf_counter() - burst_began
            replied = [r.seconds for r in results if r.completed]
            before_restart = set(processes.logs())
            if kills:
                await processes.start()
            counts, settle_s = await settled_audit(
                database_url, results, hooks, bound_s=options.settle_s, quiet_s=options.quiet_s
            )
            restart_log = notable_events(
                [path for path in processes.logs() if path not in before_restart]
            )
        finally:
            processes.stop()
    return RoundResult(
        backend,
        index,
        counts,
        kills=fired,
        burst_s=burst_s,
        first_reply_s=min(replied, default=None),
        last_reply_s=max(replied, default=None),
        settle_s=settle_s,
        round_s=time.perf_counter() - began,
        restart_log=restart_log,
    )
