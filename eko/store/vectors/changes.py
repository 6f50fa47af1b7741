"""What the in-memory vector index tells other processes: which items of a collection changed.

The feed itself lives above the store (eko.events.vectors: the event bus); the store only
names the shape of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class VectorChange:
    """Committed writes to these items of a collection (upserted or deleted)."""

    collection: str
    item_ids: tuple[str, ...]
    origin: str  # the index instance that wrote them (its own changes are already applied)


class ChangeSubscription(Protocol):
    async def next(self) -> VectorChange | None:
        """The next change; None when some were lost (the subscriber must reload)."""
        ...

    def close(self) -> None: ...


class ChangeFeed(Protocol):
    async def publish(self, change: VectorChange) -> None: ...

    async def subscribe(self) -> ChangeSubscription: ...
