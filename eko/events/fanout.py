"""Delivery to this process's subscribers: one bounded queue per subscriber. A subscriber
that falls behind (its queue is full) is dropped — flagged, woken, and removed — so a slow or
dead client never blocks the publisher or the other clients."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eko.events.types import Event


class SubscriptionDropped(Exception):
    """The subscriber could not keep up; the events it missed are gone."""


class Subscription:
    def __init__(self, fanout: Fanout, max_queue: int) -> None:
        self._fanout = fanout
        self._queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=max_queue)
        self._dropped = asyncio.Event()
        self.delivered = 0

    def offer(self, event: Event) -> None:
        """Called by the publisher: never waits."""
        if self._dropped.is_set():
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self._dropped.set()
            self._fanout.remove(self)

    @property
    def dropped(self) -> bool:
        return self._dropped.is_set()

    async def get(self) -> Event:
        """The next event; raises SubscriptionDropped once this subscriber was dropped."""
        if self._dropped.is_set():
            raise SubscriptionDropped
        getter = asyncio.ensure_future(self._queue.get())
        dropped = asyncio.ensure_future(self._dropped.wait())
        try:
            done, _pending = await asyncio.wait(
                {getter, dropped}, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            dropped.cancel()
            if not getter.done():
                getter.cancel()
        if getter in done and not getter.cancelled():
            self.delivered += 1
            return getter.result()
        raise SubscriptionDropped

    def close(self) -> None:
        self._fanout.remove(self)


class Fanout:
    def __init__(self) -> None:
        self._subscribers: set[Subscription] = set()

    def add(self, max_queue: int) -> Subscription:
        subscription = Subscription(self, max_queue)
        self._subscribers.add(subscription)
        return subscription

    def remove(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    def deliver(self, event: Event) -> None:
        for subscription in list(self._subscribers):
            subscription.offer(event)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)
