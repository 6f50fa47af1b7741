"""Who waits for a local model's turn, and who is told where they stand.

A local model serves one call at a time (eko.llm.priority). The chat service opens
`waiting_turn(listener, arrived_at)` around the answer to one message: every local call made
for it then queues by the message's arrival (a person's second call does not go behind people
who came later), and `listener` hears the call's place in the line while it waits — the
streamed reply shows "queued, position N, about T s". Context variables, like the message's
deadline (eko.llm.deadline): the calls happen deep inside the plan executor's nodes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class QueuePlace:
    """A call's place in a local model's line: `position` calls go before it (the one running
    included; 0: its turn has come), served in about `estimate_s` seconds."""

    position: int
    estimate_s: float


class WaitListener(Protocol):
    def queued(self, place: QueuePlace) -> None:
        """Heard when the call starts waiting, each time its place changes, and once (position
        0) when its turn comes. Must not block (runs on the event loop)."""
        ...


_listener: ContextVar[WaitListener | None] = ContextVar("eko_wait_listener", default=None)
_arrived: ContextVar[float | None] = ContextVar("eko_wait_arrived", default=None)


@contextmanager
def waiting_turn(listener: WaitListener | None, arrived_at: float | None = None) -> Iterator[None]:
    """Local calls made inside queue as of `arrived_at` (time.monotonic; default: now) and tell
    `listener` where they stand."""
    listener_token = _listener.set(listener)
    arrived_token = _arrived.set(time.monotonic() if arrived_at is None else arrived_at)
    try:
        yield
    finally:
        _arrived.reset(arrived_token)
        _listener.reset(listener_token)


def current_listener() -> WaitListener | None:
    return _listener.get()


def arrival() -> float:
    """When the person this call serves arrived (now, outside of `waiting_turn`)."""
    at = _arrived.get()
    return time.monotonic() if at is None else at
