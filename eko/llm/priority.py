"""PriorityGate: one holder at a time, waiters served by priority (interactive before background).

A local model runs one generation at a time. With a plain lock, a person's message queued
behind a backlog of summaries waits for all of them; here it waits at most for the one call
in flight, then goes ahead of every queued background call. Within a priority, first come,
first served. Background calls can wait indefinitely while people keep the model busy: that
is the intended trade.

A holder may also be preemptible: it passes `on_preempt`, and the first person to queue
behind it calls that (the local model then stops the background generation at its next
token, gives the gate up and retries later), so a person does not even wait for the
background call in flight.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from eko.llm.types import Priority

# Served first to last.
PRIORITY_ORDER: tuple[Priority, ...] = ("interactive", "background")


@dataclass
class Lease:
    """One holding of the gate. `preempted`: a person queued behind it and `on_preempt` ran."""

    priority: Priority
    on_preempt: Callable[[], None] | None = None
    preempted: bool = False


class PriorityGate:
    def __init__(self) -> None:
        self._held = False
        self._holder: Lease | None = None
        self._waiters: dict[Priority, deque[asyncio.Future[None]]] = {
            priority: deque() for priority in PRIORITY_ORDER
        }

    @property
    def held(self) -> bool:
        return self._held

    def waiting(self, priority: Priority) -> int:
        return sum(1 for future in self._waiters[priority] if not future.done())

    @asynccontextmanager
    async def hold(
        self,
        priority: Priority,
        *,
        on_preempt: Callable[[], None] | None = None,
        first_in_line: bool = False,
    ) -> AsyncIterator[Lease]:
        """`first_in_line`: wait ahead of this priority's queue (a preempted call coming back
        keeps its place)."""
        lease = Lease(priority, on_preempt)
        await self.acquire(priority, first_in_line=first_in_line)
        self._holder = lease
        try:
            yield lease
        finally:
            self._holder = None
            self.release()

    async def acquire(self, priority: Priority, *, first_in_line: bool = False) -> None:
        if not self._held and not any(self.waiting(p) for p in PRIORITY_ORDER):
            self._held = True
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiters[priority]
        if first_in_line:
            queue.appendleft(future)
        else:
            queue.append(future)
        self._preempt_for(priority)
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

    def _preempt_for(self, priority: Priority) -> None:
        holder = self._holder
        if (
            holder is None
            or holder.on_preempt is None
            or holder.preempted
            or PRIORITY_ORDER.index(priority) >= PRIORITY_ORDER.index(holder.priority)
        ):
            return
        holder.preempted = True
        holder.on_preempt()

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
