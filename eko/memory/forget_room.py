"""What a deleted room leaves outside its own rows: the vectors keyed by its scope (turns,
summaries, topics, memory items) and the memory items of that scope.

The room's messages, summaries and topics go by ON DELETE CASCADE; vectors and memory items
point at the room only through the scope string "room:<id>", so they are deleted here, in the
same transaction, through the vector index (which keeps its own index and the in-memory
copies in step)."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.memory.scopes import room_key
from eko.store.memory_models import MemoryItem
from eko.store.models import Embedding
from eko.store.vectors import VectorIndex


async def forget_room(session: AsyncSession, *, vectors: VectorIndex, room_id: str) -> int:
    """Delete the room's vectors and memory items; returns how many vectors went."""
    key = room_key(room_id)
    # By key alone: no index leads with it, but deleting a room is rare and this stays one read.
    rows = await session.execute(
        select(Embedding.collection, Embedding.item_id).where(Embedding.key == key)
    )
    by_collection: dict[str, list[str]] = defaultdict(list)
    for collection, item_id in rows:
        by_collection[collection].append(item_id)
    deleted = 0
    for collection, item_ids in by_collection.items():
        deleted += await vectors.delete(session, collection=collection, item_ids=item_ids)
    await session.execute(delete(MemoryItem).where(MemoryItem.scope == key))
    return deleted
