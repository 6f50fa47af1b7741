"""What an event is, and the bus interface every backend implements."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from eko.events.fanout import Subscription


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True, slots=True)
class Event:
    """`type`: message.created, job.started, job.succeeded, …; `room_id`: whose members may
    see it (None: staff only)."""

    type: str
    room_id: str | None
    data: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    at: str = field(default_factory=_now)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "room_id": self.room_id,
            "at": self.at,
            "data": self.data,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str)

    @classmethod
    def from_json(cls, text: str) -> Event:
        raw = json.loads(text)
        return cls(
            type=str(raw["type"]),
            room_id=raw.get("room_id"),
            data=dict(raw.get("data") or {}),
            id=str(raw.get("id") or uuid.uuid4().hex),
            at=str(raw.get("at") or _now()),
        )


class EventBus(Protocol):
    @property
    def backend(self) -> str: ...

    async def publish(self, event: Event) -> None:
        """Deliver to every subscriber of every process sharing the bus; never blocks on a
        slow subscriber, never raises (a lost event is logged, the caller goes on)."""
        ...

    async def subscribe(self, *, max_queue: int) -> Subscription: ...

    async def aclose(self) -> None: ...
