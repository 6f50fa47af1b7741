"""PriorityGate: one holder at a time, waiters served by priority (interactive before background).

A local model runs one generation at a time. With a plain lock, a person's message queued
behind a backlog of summaries waits for all of them; here it waits at most for the one call
in flight, then goes ahead of every queued background call. Within a priority, waiters are
served by their `ticket` (when the person they serve arrived: a person's second call of one
message does not go behind people who came after them), first come first served on a tie.
Background calls can wait indefinitely while people keep the model busy: that is the intended
trade.

A holder may also be preemptible: it passes `on_preempt`, and the first person to queue
behind it calls that (the local model then stops the background generation at its next
token, gives the gate up and retries later), so a person does not even wait for the
background call in flight.

A waiter may pass `on_place`: it hears its place in the line (eko.llm.waiting.QueuePlace)
when it starts waiting, whenever that place changes, and once with position 0 when its turn
comes. The estimate is a moving average of how long people's recent holdings lasted.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass, field

import structlog

from eko.llm.types import Priority
from eko.llm.waiting import QueuePlace

log = structlog.get_logger("eko.llm")

# Served first to last.
PRIORITY_ORDER: tuple[Priority, ...] = ("interactive", "background")
# The estimate before any holding was timed (a short reply of the bundled model on 2 cores).
DEFAULT_HOLD_S = 8.0
# Weight of the latest holding in the moving average.
HOLD_AVERAGE_WEIGHT = 0.3

PlaceListener = Callable[[QueuePlace], None]


@dataclass
class Lease:
    """One holding of the gate. `preempted`: a person queued behind it and `on_preempt` ran."""

    priority: Priority
    on_preempt: Callable[[], None] | None = None
    preempted: bool = False


@dataclass(order=True)
class _Waiter:
    ticket: float
    seq: int
    future: asyncio.Future[None] = field(compare=False)
    on_place: PlaceListener | None = field(compare=False, default=None)
    told: int | None = field(compare=False, default=None)


class PriorityGate:
    def __init__(self, *, default_hold_s: float = DEFAULT_HOLD_S) -> None:
        self._held = False
        self._held_since = 0.0
        self._holder: Lease | None = None
        self._waiters: dict[Priority, list[_Waiter]] = {priority: [] for priority in PRIORITY_ORDER}
        self._seq = itertools.count()
        self._average_hold_s = default_hold_s

    @property
    def held(self) -> bool:
        return self._held

    @property
    def held_for_s(self) -> float:
        """How long the current holding has lasted (0 when free)."""
        return time.monotonic() - self._held_since if self._held else 0.0

    @property
    def average_hold_s(self) -> float:
        """Moving average of how long people's holdings lasted: one call's expected duration."""
        return self._average_hold_s

    def waiting(self, priority: Priority) -> int:
        return sum(1 for waiter in self._waiters[priority] if not waiter.future.done())

    def estimate_s(self, position: int) -> float:
        """Seconds until a call with `position` calls before it gets its turn."""
        if position <= 0:
            return 0.0
        current_left = max(self._average_hold_s - self.held_for_s, 0.0) if self._held else 0.0
        return round(current_left + (position - 1) * self._average_hold_s, 1)

    @asynccontextmanager
    async def hold(
        self,
        priority: Priority,
        *,
        on_preempt: Callable[[], None] | None = None,
        first_in_line: bool = False,
        ticket: float | None = None,
        on_place: PlaceListener | None = None,
        while_waiting: AbstractContextManager[object] | None = None,
    ) -> AsyncIterator[Lease]:
        """`first_in_line`: wait ahead of this priority's queue (a preempted call coming back
        keeps its place). `ticket`: the waiter's place within its priority (default: now).
        `while_waiting`: entered around the wait for the gate (e.g. eko.llm.deadline.queued)."""
        lease = Lease(priority, on_preempt)
        with while_waiting if while_waiting is not None else nullcontext():
            await self.acquire(
                priority, first_in_line=first_in_line, ticket=ticket, on_place=on_place
            )
        self._holder = lease
        try:
            yield lease
        finally:
            self._holder = None
            if priority == "interactive":  # what a person waits for, one call at a time
                held_s = time.monotonic() - self._held_since
                self._average_hold_s += HOLD_AVERAGE_WEIGHT * (held_s - self._average_hold_s)
            self.release()

    async def acquire(
        self,
        priority: Priority,
        *,
        first_in_line: bool = False,
        ticket: float | None = None,
        on_place: PlaceListener | None = None,
    ) -> None:
        if not self._held and not any(self.waiting(p) for p in PRIORITY_ORDER):
            self._take()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if first_in_line:
            ticket = float("-inf")
        elif ticket is None:
            ticket = time.monotonic()
        waiter = _Waiter(ticket, next(self._seq), future, on_place)
        queue = self._waiters[priority]
        queue.append(waiter)
        queue.sort()
        self._preempt_for(priority)
        self._tell_places()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Handed the gate, then cancelled before running: pass it on.
                self.release()
            elif waiter in queue:
                queue.remove(waiter)
                self._tell_places()
            raise
        # Handed over by release(): the gate stayed held, now on this caller's behalf.

    def _take(self) -> None:
        self._held = True
        self._held_since = time.monotonic()

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
                waiter = queue.pop(0)
                if not waiter.future.done():
                    waiter.future.set_result(None)
                    self._take()
                    self._tell(waiter, 0)
                    self._tell_places()
                    return
        self._held = False

    def _tell_places(self) -> None:
        """Every waiter whose place changed hears it (the holding in flight counts as one)."""
        ahead = 1 if self._held else 0
        for priority in PRIORITY_ORDER:
            for waiter in self._waiters[priority]:
                if waiter.future.done():
                    continue
                ahead += 1
                self._tell(waiter, ahead - 1)

    def _tell(self, waiter: _Waiter, position: int) -> None:
        if waiter.on_place is None or waiter.told == position:
            return
        waiter.told = position
        try:
            waiter.on_place(QueuePlace(position, self.estimate_s(position)))
        except Exception:  # a listener's bug must not break the line
            log.warning("llm.gate.listener_failed", exc_info=True)
