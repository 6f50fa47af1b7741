"""Row-level primitives on `guard_entries` and their vectors, shared by lookup, learning and the
staff operations: which rows are live, row locks, marking obsolete, deleting, counting a use.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.guard.decide import usage_increment
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import utcnow
from eko.store.vectors import VectorIndex

# The entries' collection in the shared `embeddings` table (item_id = entry id, key = scope).
COLLECTION = "guard"


class GuardEntries:
    def __init__(self, *, database: Database, vectors: VectorIndex, max_age_days: int) -> None:
        self.database = database
        self.vectors = vectors
        self.max_age_days = max_age_days

    def expiry_cutoff(self) -> datetime:
        return utcnow() - timedelta(days=self.max_age_days)

    def live(self) -> Select[Any]:
        """Entries that may be served: active and not expired (expired ones wait for prune)."""
        return select(GuardEntry).where(
            GuardEntry.status == "active", GuardEntry.created_at >= self.expiry_cutoff()
        )

    async def get(self, entry_id: str) -> GuardEntry | None:
        async with self.database.session() as session:
            return await session.get(GuardEntry, entry_id)

    async def obsolete(
        self, session: AsyncSession, entry: GuardEntry, *, reason: str, by: str | None
    ) -> None:
        """Never served again: its vector leaves the index; the row stays for audit."""
        entry.status = "obsolete"
        entry.obsoleted_at = utcnow()
        entry.meta = {**(entry.meta or {}), "obsolete": {"reason": reason, "by": by}}
        await self.vectors.delete(session, collection=COLLECTION, item_ids=[entry.id])

    async def delete_ids(self, session: AsyncSession, ids: list[str]) -> int:
        await self.vectors.delete(session, collection=COLLECTION, item_ids=ids)
        result = await session.execute(delete(GuardEntry).where(GuardEntry.id.in_(ids)))
        return int(getattr(result, "rowcount", 0) or 0)


async def count_use(session: AsyncSession, entry_id: str, score: float) -> None:
    # One UPDATE with the increment in SQL: concurrent hits never lose a count.
    await session.execute(
        update(GuardEntry)
        .where(GuardEntry.id == entry_id)
        .values(usage_count=GuardEntry.usage_count + usage_increment(score), last_used_at=utcnow())
    )


async def for_update(session: AsyncSession, entry_id: str) -> GuardEntry | None:
    # Row lock on PostgreSQL (SQLite serializes writers anyway): read-modify-write of metadata.
    result = await session.execute(
        select(GuardEntry).where(GuardEntry.id == entry_id).with_for_update()
    )
    return result.scalar_one_or_none()
