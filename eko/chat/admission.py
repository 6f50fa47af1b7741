"""Admission of a new message, before anything is stored: the limits that refuse it early.

Two limits, both answered by `Overloaded` (503 + Retry-After, problem+json): messages in flight
in this process (EKO_CHAT_MAX_INFLIGHT), and people waiting for the local model
(EKO_LOCAL_MAX_QUEUE). The local model serves one call at a time; past a few people in line, a
new message would only be answered after minutes — refusing it at once, with a time to come
back, beats accepting it and apologising later.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

# Model calls one message costs the local model (routing, then the reply): how long a place in
# line takes to free up.
CALLS_PER_MESSAGE = 2
MAX_RETRY_AFTER_S = 300


class Overloaded(RuntimeError):
    """Too many messages are being answered: nothing was stored; retry after a moment."""

    def __init__(self, retry_after_s: int, detail: str | None = None) -> None:
        super().__init__(detail or f"too many messages in flight; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s
        self.detail = detail


class Line(Protocol):
    """A local model's line of calls (eko.llm.priority.PriorityGate)."""

    @property
    def average_hold_s(self) -> float: ...


class LocalLine:
    """Refuses a message that would wait behind `max_queue` people for the local model.

    `line()` is the line of the model that would answer now (None: a remote provider, which
    has no line of its own here)."""

    def __init__(self, line: Callable[[], Line | None], *, max_queue: int) -> None:
        self._line = line
        self.max_queue = max_queue

    def admit(self, answering: int) -> None:
        """`answering`: messages being answered now (one served, the others waiting).
        Raises Overloaded when the newcomer would find the line full."""
        if self.max_queue <= 0:
            return
        line = self._line()
        if line is None:
            return
        waiting = max(answering - 1, 0)
        if waiting < self.max_queue:
            return
        retry_after = min(
            max(math.ceil(line.average_hold_s * CALLS_PER_MESSAGE), 1), MAX_RETRY_AFTER_S
        )
        raise Overloaded(
            retry_after,
            f"{waiting} people are already waiting for the local model (at most "
            f"{self.max_queue}); nothing was stored. Retry in {retry_after} s.",
        )
