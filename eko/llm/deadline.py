"""One deadline per message, shared by every model call made while answering it.

The chat service opens it (`message_deadline(seconds)`) around the whole answer; the runtime
reads it (`remaining_s()`) to bound each provider call. A context variable, because the calls
happen deep inside the plan executor's nodes and each message runs in its own task: the
deadline follows the task without threading a parameter through every node.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("eko_message_deadline", default=None)


@contextmanager
def message_deadline(seconds: float) -> Iterator[None]:
    """Every model call inside shares `seconds` from now (an outer, earlier deadline wins)."""
    at = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(at if outer is None else min(at, outer))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining_s() -> float | None:
    """Seconds left before the current message's deadline, or None outside of one."""
    at = _deadline.get()
    return None if at is None else at - time.monotonic()
