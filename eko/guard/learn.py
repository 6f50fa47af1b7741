"""Learning: store a validated question/answer pair in one scope, and find what was learned.

Who may validate what, and into which scope, is decided by the callers (eko.guard.replies,
the staff routes, eko.guard.agreement); this module only writes what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.guard.entries import COLLECTION, GuardEntries, for_update
from eko.guard.normalize import key_hash
from eko.guard.scope import Scope
from eko.guard.validation import answer_refusal, question_refusal
from eko.store.guard_models import GuardEntry
from eko.store.models import utcnow

log = structlog.get_logger("eko.guard")


class NotLearnable(ValueError):
    """This question/answer pair may not become an entry; `reason` says why (a stable slug)."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Learned:
    entry: GuardEntry
    created: bool  # False: this source message had been learned already


class GuardWriter:
    def __init__(self, *, entries: GuardEntries, embedder: Embedder) -> None:
        self._entries = entries
        self._embedder = embedder

    async def learn(
        self,
        *,
        question: str,
        answer: str,
        scope: Scope,
        meta: Mapping[str, Any] | None = None,
        source_message_id: str | None = None,
    ) -> Learned:
        """Store a validated pair; a newer answer to the same question in the same scope
        supersedes (obsoletes) the older one. Raises NotLearnable.

        `source_message_id` is unique among entries: learning the same message twice returns
        the first entry.
        """
        question, answer = question.strip(), answer.strip()
        reason = question_refusal(question) or answer_refusal(answer)
        if reason is not None:
            raise NotLearnable(reason)
        if source_message_id is not None:
            existing = await self.by_source_message(source_message_id)
            if existing is not None:
                return Learned(existing, False)
        vector = (await self._embedder.embed([question], kind="query"))[0]
        key = key_hash(scope.key, question)
        try:
            async with self._entries.database.session() as session:
                entry = GuardEntry(
                    scope=scope.key,
                    key_hash=key,
                    question=question,
                    answer=answer,
                    meta=dict(meta or {}),
                    status="active",
                    usage_count=0,
                    source_message_id=source_message_id,
                    created_at=utcnow(),
                )
                session.add(entry)
                await session.flush()
                await self._supersede(session, scope.key, key, by=entry.id)
                await self._entries.vectors.upsert(
                    session,
                    collection=COLLECTION,
                    item_id=entry.id,
                    key=scope.key,
                    text=question,
                    vector=vector,
                    model=self._embedder.name,
                )
        except IntegrityError:
            # The same message validated twice at once: the other request stored it.
            if source_message_id is not None:
                existing = await self.by_source_message(source_message_id)
                if existing is not None:
                    return Learned(existing, False)
            raise
        log.info("guard.learned", entry_id=entry.id, scope=scope.kind)
        return Learned(entry, True)

    async def _supersede(self, session: AsyncSession, scope: str, key: str, *, by: str) -> None:
        result = await session.execute(
            select(GuardEntry).where(
                GuardEntry.scope == scope,
                GuardEntry.key_hash == key,
                GuardEntry.status == "active",
                GuardEntry.id != by,
            )
        )
        for old in result.scalars():
            await self._entries.obsolete(session, old, reason="superseded", by=by)

    async def by_source_message(self, message_id: str) -> GuardEntry | None:
        async with self._entries.database.session() as session:
            result = await session.execute(
                select(GuardEntry).where(GuardEntry.source_message_id == message_id)
            )
            return result.scalar_one_or_none()

    async def live_in_scope(self, scope: Scope, question: str) -> list[GuardEntry]:
        """Active, unexpired entries of this exact question in this one scope, newest first."""
        async with self._entries.database.session() as session:
            result = await session.execute(
                self._entries.live()
                .where(
                    GuardEntry.scope == scope.key,
                    GuardEntry.key_hash == key_hash(scope.key, question),
                )
                .order_by(GuardEntry.created_at.desc(), GuardEntry.id)
            )
            return list(result.scalars().all())

    async def learned_from(self, scope: Scope, question: str, message_id: str) -> GuardEntry | None:
        """The live entry of `scope` learned from this message (recorded in meta.source), for
        entries that do not hold the message in the unique source_message_id column."""
        for entry in await self.live_in_scope(scope, question):
            source = (entry.meta or {}).get("source") or {}
            if source.get("message_id") == message_id:
                return entry
        return None

    async def live_with_meta(
        self, *, scope_prefix: str, meta_key: str, value: str
    ) -> Sequence[GuardEntry]:
        """Active, unexpired entries whose scope starts with `scope_prefix` and whose metadata
        holds `meta_key: value` (a JSON filter: the same SQL works on SQLite and PostgreSQL)."""
        async with self._entries.database.session() as session:
            result = await session.execute(
                self._entries.live()
                .where(
                    GuardEntry.scope.startswith(scope_prefix, autoescape=True),
                    GuardEntry.meta[meta_key].as_string() == value,
                )
                .order_by(GuardEntry.created_at.desc(), GuardEntry.id)
            )
            return result.scalars().all()

    async def record_feedback(
        self, entry_id: str, *, rating: str, previous: str | None = None
    ) -> None:
        """A user's rating of a cached answer, counted on the entry for staff to audit.

        `previous` is that user's earlier rating of the same message, taken back.
        """
        async with self._entries.database.session() as session:
            entry = await for_update(session, entry_id)
            if entry is None:
                return
            feedback = {"up": 0, "down": 0, **((entry.meta or {}).get("feedback") or {})}
            feedback[rating] = int(feedback.get(rating, 0)) + 1
            if previous in ("up", "down"):
                feedback[previous] = max(0, int(feedback.get(previous, 0)) - 1)
            entry.meta = {**(entry.meta or {}), "feedback": feedback}
