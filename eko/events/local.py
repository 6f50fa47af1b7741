"""The in-process bus (SQLite, one process): publish hands the event to this process's
subscribers directly."""

from __future__ import annotations

from eko.events.fanout import Fanout, Subscription
from eko.events.types import Event


class InProcessBus:
    backend = "local"

    def __init__(self) -> None:
        self._fanout = Fanout()

    async def publish(self, event: Event) -> None:
        self._fanout.deliver(event)

    async def subscribe(self, *, max_queue: int) -> Subscription:
        return self._fanout.add(max_queue)

    @property
    def subscribers(self) -> int:
        return self._fanout.subscribers

    async def aclose(self) -> None:
        return None
