"""Runs after-reply work off the request path, and lets shutdown (or a test) wait for it.

Work that needs a model can be deferred until one is reachable (`wait_until`): while every
provider's circuit breaker is open, extraction and summaries wait instead of failing; work
still waiting at shutdown is dropped (and logged), never run against a dead provider.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger("eko.chat")

Ready = Callable[[], bool]


class BackgroundTasks:
    def __init__(self, *, poll_s: float = 2.0, max_wait_s: float = 900.0) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        # Tasks still waiting for `wait_until`: cancelled (dropped) by drain().
        self._waiting: set[asyncio.Task[None]] = set()
        self._poll_s = poll_s
        self._max_wait_s = max_wait_s

    def spawn(
        self, name: str, work: Callable[[], Awaitable[None]], *, wait_until: Ready | None = None
    ) -> None:
        async def guarded() -> None:
            task = asyncio.current_task()
            try:
                if wait_until is not None and not wait_until():
                    assert task is not None
                    self._waiting.add(task)
                    ready = await self._wait(wait_until)
                    self._waiting.discard(task)
                    if not ready:
                        log.warning("chat.background.dropped", task=name, reason="model_down")
                        return
                await work()
            except asyncio.CancelledError:
                log.warning("chat.background.dropped", task=name, reason="shutdown")
            except Exception:  # background work must never take the server down
                log.exception("chat.background.failed", task=name)

        task = asyncio.create_task(guarded(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._waiting.discard)

    async def _wait(self, ready: Ready) -> bool:
        waited = 0.0
        while not ready():
            if waited >= self._max_wait_s:
                return False
            await asyncio.sleep(self._poll_s)
            waited += self._poll_s
        return True

    @property
    def pending(self) -> int:
        return len(self._tasks)

    @property
    def deferred(self) -> int:
        """Tasks waiting for a model to be reachable."""
        return len(self._waiting)

    async def drain(self) -> None:
        """Wait until every spawned task (and any they spawn) has finished; work still waiting
        for a model is dropped rather than waited for."""
        while self._tasks:
            for task in list(self._waiting):
                task.cancel()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
