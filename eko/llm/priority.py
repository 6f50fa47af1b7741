"""PriorityGate: one holder at a time, waiters served by priority (interactive before background).

A local model runs one generation at a time. With a plain lock, a person's message queued
behind a backlog of summaries waits for all of them; here it waits at most for the one call
in flight, then goes ahead of every queued background call. Within a priority, first come,
first served. Background calls can wait indefinitely while people keep the model busy: that
is the intended trade.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from eko.llm.types import Priority

# Served first to last.
PRIORITY_ORDER: tuple[Priority, ...] = ("interactive", "background")


class PriorityGate:
    def __init__(self) -> None:
        self._held = False
        self._waiters: dict[Priority, deque[asyncio.Future[None]]] = {
            priority: deque() for priority in PRIORITY_ORDER
        }

    @property
    def held(self) -> bool:
        return self._held

    def waiting(self, priority: Priority) -> int:
        return sum(1 for future in self._waiters[priority] if not future.done())

    @asynccontextmanager
    async def hold(self, priority: Priority) -> AsyncIterator[None]:
        await self.acquire(priority)
        try:
            yield
        finally:
            self.release()

    async def acquire(self, priority: Priority) -> None:
        if not self._held and not any(self.waiting(p) for p in PRIORITY_ORDER):
            self._held = True
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiters[priority]
        queue.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Handed the gate, then cancelled before running: pass it on.
                self.release()
            elif future in queue:
                queue.remove(future)
            raise
        # Handed over by release(): the gate stayed held, now on this caller's behalf.

    def release(self) -> None:
        """Hand the gate to the first waiter of the highest priority, or free it."""
        if not self._held:
            raise RuntimeError("PriorityGate.release() while not held")
        for priority in PRIORITY_ORDER:
            queue = self._waiters[priority]
            while queue:
                future = queue.popleft()
                if not future.done():
                    future.set_result(None)
                    return
        self._held = False
