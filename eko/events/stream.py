"""One client's view of the bus: the events it may see, and a notice when it is dropped."""

from __future__ import annotations

import asyncio
from typing import Any

from eko.events.access import EventAccess
from eko.events.fanout import Subscription, SubscriptionDropped
from eko.events.types import Event
from eko.events.vectors import EVENT_TYPE as VECTORS_CHANGED

# Events the bus carries between Eko's processes only (the in-memory vector index's changes).
INTERNAL_TYPES = frozenset({VECTORS_CHANGED})

DROPPED_NOTICE = {
    "type": "stream.dropped",
    "data": {
        "reason": "slow_client",
        "detail": "this connection fell behind and was closed; reconnect and re-read state",
    },
}

# Sent last on a connection opened with a browser token, when that token expires.
EXPIRED_NOTICE = {
    "type": "stream.expired",
    "data": {
        "reason": "token_expired",
        "detail": "this connection's token expired; reconnect with a new one from "
        "POST /v1/events/token",
    },
}


class EventStream:
    def __init__(self, subscription: Subscription, access: EventAccess) -> None:
        self._subscription = subscription
        self._access = access
        self.closed = False

    async def next(self, wait_s: float) -> dict[str, Any] | None:
        """The next visible event as a dict; None when `wait_s` passes with none; the
        dropped notice (then the stream is closed) when the client fell behind."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while not self.closed:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            try:
                event: Event = await asyncio.wait_for(self._subscription.get(), remaining)
            except TimeoutError:
                return None
            except SubscriptionDropped:
                self.close()
                return dict(DROPPED_NOTICE)
            if event.type in INTERNAL_TYPES:
                continue  # between Eko's own processes, not for clients
            if await self._access.may_see(event):
                return event.to_dict()
        return None

    def close(self) -> None:
        self.closed = True
        self._subscription.close()
