"""One deadline per message, shared by every model call made while answering it, and the time
limits around those calls — all of which stop counting while the call waits in a local model's
queue.

The chat service opens the deadline (`message_deadline(seconds)`) around the whole answer; the
runtime reads it (`remaining_s()`) to bound each provider call. A context variable, because the
calls happen deep inside the plan executor's nodes and each message runs in its own task: the
deadline follows the task without threading a parameter through every node.

Time limits that wrap a model call (the provider walk's, the writer node's, the orchestrator's)
are opened with `time_limit(seconds)` instead of `asyncio.timeout`, so that they join the same
chain. A local model serves one call at a time: a call waiting for its turn (`queued(bound_s)`,
around the wait) pauses every deadline and limit of its chain, up to `bound_s` — the deadline
counts from when its turn comes, not from when the message arrived. Past `bound_s` of waiting,
the limits fire as they would have.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from contextvars import ContextVar


class Clock:
    """One deadline (`at`, time.monotonic) or one asyncio time limit, which a wait in a queue
    pushes back by the time waited. Several tasks may pause the same clock at once (concurrent
    nodes of one message): it is pushed back by the time any of them waited, counted once."""

    def __init__(self, *, at: float | None = None, timer: asyncio.Timeout | None = None) -> None:
        self.at = at
        self.timer = timer
        self.paused_s = 0.0  # total time this clock was pushed back
        self._depth = 0
        self._paused_at = 0.0
        self._timer_when: float | None = None

    def remaining_s(self, now: float) -> float | None:
        return None if self.at is None else self.at - now

    def pause(self, now: float, bound_s: float) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        self._paused_at = now
        if self.timer is not None and not self.timer.expired():
            self._timer_when = self.timer.when()
            if self._timer_when is not None:
                self.timer.reschedule(self._timer_when + bound_s)

    def resume(self, now: float, bound_s: float) -> None:
        self._depth -= 1
        if self._depth > 0:
            return
        waited = max(0.0, min(now - self._paused_at, bound_s))
        self.paused_s += waited
        if self.at is not None:
            self.at += waited
        if self.timer is not None and self._timer_when is not None and not self.timer.expired():
            with suppress(RuntimeError):  # the limit was left meanwhile
                self.timer.reschedule(self._timer_when + waited)
        self._timer_when = None


_chain: ContextVar[tuple[Clock, ...]] = ContextVar("eko_message_deadline", default=())


@contextmanager
def message_deadline(seconds: float) -> Iterator[None]:
    """Every model call inside shares `seconds` from now (an outer, earlier deadline wins)."""
    token = _chain.set((*_chain.get(), Clock(at=time.monotonic() + seconds)))
    try:
        yield
    finally:
        _chain.reset(token)


@asynccontextmanager
async def time_limit(seconds: float | None) -> AsyncIterator[Clock]:
    """`asyncio.timeout(seconds)` (TimeoutError when it fires) whose clock stops while a call
    inside waits in a local model's queue. Yields the clock (`paused_s`: the time it waited)."""
    async with asyncio.timeout(seconds) as timer:
        clock = Clock(timer=timer)
        token = _chain.set((*_chain.get(), clock))
        try:
            yield clock
        finally:
            _chain.reset(token)


@contextmanager
def queued(bound_s: float) -> Iterator[None]:
    """Around a wait for a local model's turn: every deadline and limit of this task's chain
    stops counting, for `bound_s` at most."""
    clocks = _chain.get()
    for clock in clocks:
        clock.pause(time.monotonic(), bound_s)
    try:
        yield
    finally:
        for clock in clocks:
            clock.resume(time.monotonic(), bound_s)


def remaining_s() -> float | None:
    """Seconds left before the current message's deadline, or None outside of one."""
    now = time.monotonic()
    left = [r for clock in _chain.get() if (r := clock.remaining_s(now)) is not None]
    return min(left) if left else None
