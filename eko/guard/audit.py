"""Staff operations on the memory guard: list, mark obsolete, delete, prune expired, count."""

from __future__ import annotations

import structlog
from sqlalchemy import func, or_, select

from eko.guard.entries import GuardEntries, for_update
from eko.guard.scope import Scope
from eko.store.guard_models import GuardEntry

log = structlog.get_logger("eko.guard")

# Entries deleted per transaction when pruning.
PRUNE_CHUNK = 500


class GuardAudit:
    def __init__(self, *, entries: GuardEntries) -> None:
        self._entries = entries

    async def list_entries(
        self,
        *,
        scope: str | None = None,
        persona: str | None = None,
        status: str | None = None,
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[GuardEntry], int]:
        """Newest first, filtered; returns (page, total matching)."""
        query = select(GuardEntry)
        if scope is not None:
            query = query.where(GuardEntry.scope == scope)
        if persona is not None:
            shared = Scope(persona).key
            query = query.where(
                or_(
                    GuardEntry.scope == shared,
                    GuardEntry.scope.startswith(shared + "|", autoescape=True),
                )
            )
        if status is not None:
            query = query.where(GuardEntry.status == status)
        if text:
            pattern = f"%{_escape_like(text.strip().lower())}%"
            query = query.where(
                or_(
                    func.lower(GuardEntry.question).like(pattern, escape="\\"),
                    func.lower(GuardEntry.answer).like(pattern, escape="\\"),
                )
            )
        async with self._entries.database.session() as session:
            total = int(
                (
                    await session.execute(select(func.count()).select_from(query.subquery()))
                ).scalar_one()
            )
            result = await session.execute(
                query.order_by(GuardEntry.created_at.desc(), GuardEntry.id)
                .limit(limit)
                .offset(offset)
            )
            return list(result.scalars().all()), total

    async def mark_obsolete(
        self, entry_id: str, *, reason: str = "staff", by: str | None = None
    ) -> GuardEntry | None:
        """Never served again (its vector leaves the index); kept for audit until it expires."""
        async with self._entries.database.session() as session:
            entry = await for_update(session, entry_id)
            if entry is None:
                return None
            if entry.status != "obsolete":
                await self._entries.obsolete(session, entry, reason=reason, by=by)
            return entry

    async def delete(self, entry_id: str) -> bool:
        async with self._entries.database.session() as session:
            deleted = await self._entries.delete_ids(session, [entry_id])
        return deleted > 0

    async def prune(self, *, limit: int | None = None, dry_run: bool = False) -> int:
        """Delete entries older than max_age_days (any status) with their vectors; returns how
        many (would) go. `limit` bounds one call (lookups prune a batch at a time)."""
        cutoff = self._entries.expiry_cutoff()
        total = 0
        while True:
            batch = PRUNE_CHUNK if limit is None else min(PRUNE_CHUNK, limit - total)
            if batch <= 0:
                break
            async with self._entries.database.session() as session:
                ids = list(
                    (
                        await session.execute(
                            select(GuardEntry.id)
                            .where(GuardEntry.created_at < cutoff)
                            .order_by(GuardEntry.created_at)
                            .limit(batch)
                            .offset(total if dry_run else 0)
                        )
                    ).scalars()
                )
                if ids and not dry_run:
                    await self._entries.delete_ids(session, ids)
            total += len(ids)
            if len(ids) < batch:
                break
        if total and not dry_run:
            log.info("guard.pruned", entries=total, max_age_days=self._entries.max_age_days)
        return total

    async def count(self) -> dict[str, int]:
        """Entries per status (for stats and `eko cache list`)."""
        async with self._entries.database.session() as session:
            result = await session.execute(
                select(GuardEntry.status, func.count()).group_by(GuardEntry.status)
            )
            return {status: int(n) for status, n in result.all()}


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
