"""The in-memory vector index's change feed over the event bus: a committed write publishes a
`vectors.changed` event (no room: staff only on /v1/events), which every other process's index
receives (PostgreSQL LISTEN/NOTIFY) and re-reads the changed items from the database."""

from __future__ import annotations

from eko.events.fanout import Subscription, SubscriptionDropped
from eko.events.types import Event, EventBus
from eko.store.vectors.changes import VectorChange

EVENT_TYPE = "vectors.changed"
# Item ids per event: a NOTIFY payload holds under 8,000 bytes (ids are 32 characters).
MAX_IDS = 150
QUEUE_SIZE = 1024


class EventChangeFeed:
    def __init__(self, bus: EventBus) -> None:
        self._bus = bus

    @property
    def shared(self) -> bool:
        """True when the bus reaches every process (not the in-process bus)."""
        return self._bus.backend != "local"

    async def publish(self, change: VectorChange) -> None:
        ids = list(change.item_ids)
        for start in range(0, max(len(ids), 1), MAX_IDS):
            await self._bus.publish(
                Event(
                    type=EVENT_TYPE,
                    room_id=None,
                    data={
                        "collection": change.collection,
                        "item_ids": ids[start : start + MAX_IDS],
                        "origin": change.origin,
                    },
                )
            )

    async def subscribe(self) -> EventChangeSubscription:
        return EventChangeSubscription(await self._bus.subscribe(max_queue=QUEUE_SIZE))


class EventChangeSubscription:
    def __init__(self, subscription: Subscription) -> None:
        self._subscription = subscription

    async def next(self) -> VectorChange | None:
        while True:
            try:
                event = await self._subscription.get()
            except SubscriptionDropped:
                return None
            if event.type != EVENT_TYPE:
                continue
            data = event.data
            return VectorChange(
                collection=str(data.get("collection", "")),
                item_ids=tuple(str(i) for i in data.get("item_ids") or []),
                origin=str(data.get("origin", "")),
            )

    def close(self) -> None:
        self._subscription.close()
