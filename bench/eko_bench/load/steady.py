"""(d) steady load: K users, each in their own direct room, each posting one message after the
other for T seconds (a closed loop: a user sends the next message when the reply came).

What it measures, against a fake model that answers every call in `latency_s`:

- throughput: replies per second over the run, against the ideal K / (c × latency), where c is
  the model calls one reply costs, counted at the fake upstream (orchestrator + writer: 2 with
  memory extraction and summaries off). The ideal is what K users get from a server that adds
  nothing to the model's time;
- added latency p50/p95/p99: each 2xx answer's response time minus c × latency, i.e. what the
  server (HTTP, database, queueing, pipeline) adds to the model's own time;
- errors: non-2xx answers and requests with no answer.

The same scenario runs against one API worker and against `eko serve --workers 2` (PostgreSQL
only: Eko refuses several workers on an SQLite file), see steady_stack.py.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from eko_bench.load.client import Outcome, PostSpec, create_direct_room, health_poller, post_once
from eko_bench.load.records import create_pro_users, settled_counts
from eko_bench.load.report import percentile
from eko_bench.load.scenarios import ScenarioResult


@dataclass
class SteadyResult(ScenarioResult):
    """A ScenarioResult with the steady-load figures."""

    backend: str = ""
    workers: int = 1
    users: int = 0
    latency_s: float = 0.0
    duration_s: float = 0.0
    model_calls: int = 0
    hung_calls: int = 0

    @property
    def calls_per_reply(self) -> float | None:
        """Model calls one reply cost on average (None before any reply)."""
        replies = self.counts.replies
        return self.model_calls / replies if replies else None

    @property
    def model_seconds(self) -> float | None:
        """The model's own time in one reply: calls per reply × the fake's latency."""
        calls = self.calls_per_reply
        return calls * self.latency_s if calls is not None else None

    @property
    def throughput(self) -> float:
        """2xx replies per second over the run (first request to last answer)."""
        return self.ok / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def ideal(self) -> float | None:
        """K / (calls per reply × latency): every user always waiting on the model only."""
        model = self.model_seconds
        return self.users / model if model else None

    @property
    def errors(self) -> int:
        return self.requests - self.ok

    def added_seconds(self) -> list[float]:
        """Each 2xx answer's response time minus the model's time per reply, fastest first."""
        model = self.model_seconds or 0.0
        return [seconds - model for seconds in self.ok_seconds]

    def added_percentile(self, q: float) -> float | None:
        return percentile(self.added_seconds(), q)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _user_loop(
    base_url: str,
    room: str,
    key: str,
    user: int,
    *,
    deadline: float,
    timeout_s: float,
    outcomes: list[Outcome],
) -> None:
    """Post, wait for the answer, post again, until `deadline` (no new post after it)."""
    sent = 0
    while time.perf_counter() < deadline:
        spec = PostSpec(
            f"/v1/rooms/{room}/messages",
            {"content": f"Utilisateur {user}, question {sent} : combien font {sent} et {user} ?"},
            _auth(key),
        )
        outcome = await post_once(base_url, spec, timeout_s=timeout_s)
        outcomes.append(outcome)
        sent += 1
        if outcome.status is None or outcome.status >= 500:
            # A server in trouble: do not spin on it (a 503 says when to come back).
            await asyncio.sleep(0.5)


async def steady_load(
    base_url: str,
    database_url: str,
    *,
    backend: str,
    workers: int,
    users: int = 16,
    duration_s: float = 20.0,
    latency_s: float = 0.3,
    timeout_s: float = 60.0,
    settle_s: float = 30.0,
) -> SteadyResult:
    """(d) `users` users post one after another for `duration_s`; model calls are filled in by
    the caller (it holds the fake upstream)."""
    keys = await create_pro_users(
        database_url, [f"load-steady-{workers}w-{i}" for i in range(users)]
    )
    rooms = [await create_direct_room(base_url, key, timeout_s=timeout_s) for key in keys]
    outcomes: list[Outcome] = []
    began = time.perf_counter()
    deadline = began + duration_s
    async with health_poller(base_url) as health:
        await asyncio.gather(
            *(
                _user_loop(
                    base_url,
                    room,
                    key,
                    index,
                    deadline=deadline,
                    timeout_s=timeout_s,
                    outcomes=outcomes,
                )
                for index, (key, room) in enumerate(zip(keys, rooms, strict=True))
            )
        )
    elapsed = time.perf_counter() - began
    counts = await settled_counts(database_url, rooms, bound_s=settle_s)
    worker_text = "worker" if workers == 1 else "workers"
    return SteadyResult(
        "d",
        f"d {users} users × {duration_s:g} s, {workers} API {worker_text}",
        outcomes,
        counts,
        health,
        elapsed,
        backend=backend,
        workers=workers,
        users=users,
        latency_s=latency_s,
        duration_s=duration_s,
    )
