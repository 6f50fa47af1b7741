"""The load client: concurrent requests through real sockets, and a /health poller beside them.

Every request's outcome is kept (status or transport error, time, body) so a scenario can
count statuses and read what the server answered; nothing is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from eko_bench.load.http import HTTPProtocolError, request

# What "no HTTP answer" looks like: timeout, refused or reset connection, cut or garbled answer.
_NO_ANSWER = (TimeoutError, OSError, asyncio.IncompleteReadError, HTTPProtocolError)


@dataclass(frozen=True)
class PostSpec:
    """One request of a burst."""

    path: str
    json: dict[str, Any]
    headers: dict[str, str]


@dataclass(frozen=True)
class Outcome:
    """One request's result: `status` is None when no HTTP answer came (timeout, reset)."""

    status: int | None
    seconds: float
    body: Any = None
    error: str | None = None


async def post_once(base_url: str, spec: PostSpec, *, timeout_s: float) -> Outcome:
    began = time.perf_counter()
    try:
        response = await request(
            base_url,
            "POST",
            spec.path,
            json_body=spec.json,
            headers=spec.headers,
            timeout_s=timeout_s,
        )
    except _NO_ANSWER as exc:
        return Outcome(None, time.perf_counter() - began, error=type(exc).__name__)
    seconds = time.perf_counter() - began
    try:
        body = response.json()
    except ValueError:
        body = response.body[:200].decode("utf-8", errors="replace")
    return Outcome(response.status, seconds, body)


async def burst(base_url: str, specs: Sequence[PostSpec], *, timeout_s: float) -> list[Outcome]:
    """All requests at once, each bounded by `timeout_s`: every task is created before any is
    let through (a barrier), so they reach the server as one burst."""
    gate = asyncio.Event()

    async def one(spec: PostSpec) -> Outcome:
        await gate.wait()
        return await post_once(base_url, spec, timeout_s=timeout_s)

    tasks = [asyncio.create_task(one(spec)) for spec in specs]
    await asyncio.sleep(0)
    gate.set()
    return list(await asyncio.gather(*tasks))


@dataclass
class HealthSamples:
    seconds: list[float] = field(default_factory=list)
    failures: int = 0


@contextlib.asynccontextmanager
async def health_poller(
    base_url: str, *, interval_s: float = 0.1, timeout_s: float = 10.0
) -> AsyncIterator[HealthSamples]:
    """GET /health one after another while the block runs; a non-200 or no answer is a failure.

    The poller runs on its own thread and event loop, as a monitoring probe would from
    outside: on the burst's loop, each sample would also wait behind the load client's own
    thousand coroutines and measure the client rather than the server.
    """
    samples = HealthSamples()
    stop = threading.Event()

    async def poll() -> None:
        while not stop.is_set():
            began = time.perf_counter()
            try:
                response = await request(base_url, "GET", "/health", timeout_s=timeout_s)
                ok = response.status == 200
            except _NO_ANSWER:
                ok = False
            if ok:
                samples.seconds.append(time.perf_counter() - began)
            else:
                samples.failures += 1
            await asyncio.sleep(interval_s)

    thread = threading.Thread(target=asyncio.run, args=(poll(),), name="health-poller")
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        await asyncio.to_thread(thread.join)


async def create_direct_room(base_url: str, api_key: str, *, timeout_s: float) -> str:
    response = await request(
        base_url,
        "POST",
        "/v1/rooms",
        json_body={"kind": "direct"},
        headers={"Authorization": f"Bearer {api_key}"},
        timeout_s=timeout_s,
    )
    if response.status != 201:
        raise RuntimeError(f"room creation failed: {response.status} {response.body[:300]!r}")
    room_id: str = response.json()["id"]
    return room_id
