"""GuardService: look up, learn, expire and audit validated answers (the memory guard).

Lookup order (spec): the exact key (SHA-256 of scope + normalized question) first, then the
nearest stored questions of the same scopes by cosine, served at or above the threshold when
the false-hit check agrees. No model is ever called here; the only model is the embedder.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import structlog
from sqlalchemy import Select, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.guard.check import CheckResult, false_hit_check
from eko.guard.decide import Candidate, Decision, Judged, decide, usage_increment
from eko.guard.normalize import key_hash, normalize_question
from eko.guard.scope import Scope
from eko.guard.validation import answer_refusal, question_refusal
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import utcnow
from eko.store.vectors import VectorIndex

log = structlog.get_logger("eko.guard")

COLLECTION = "guard"
PRUNE_BATCH = 500


class NotLearnable(ValueError):
    """This question/answer pair may not become an entry; `reason` says why (a stable slug)."""

    def __init__(self, reason: str, detail: str | None = None) -> None:
        super().__init__(detail or reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Hit:
    entry: GuardEntry
    score: float
    match: str  # "exact" | "semantic"
    check: CheckResult | None

    def as_meta(self, threshold: float) -> dict[str, Any]:
        """What a cached_response message records about where its answer came from."""
        return {
            "entry_id": self.entry.id,
            "score": round(self.score, 4),
            "match": self.match,
            "threshold": threshold,
            "scope": Scope.parse(self.entry.scope).kind,
            "check": None if self.check is None else self.check.as_meta(),
        }


@dataclass(frozen=True, slots=True)
class Lookup:
    hit: Hit | None
    threshold: float
    decision: Decision[GuardEntry] | None  # None when the exact key answered


@dataclass(frozen=True, slots=True)
class Learned:
    entry: GuardEntry
    created: bool  # False: this source message had been learned already


class GuardService:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        threshold: float | None = None,
        max_age_days: int = 180,
        auto_prune: bool = True,
        prune_interval_s: float = 600.0,
        false_hit_check: bool = True,
        candidates: int = 8,
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self._threshold = threshold
        self.max_age_days = max_age_days
        self.auto_prune = auto_prune
        self.prune_interval_s = prune_interval_s
        self.check_enabled = false_hit_check
        self.candidates = candidates
        self._next_prune = 0.0  # monotonic seconds

    @property
    def threshold(self) -> float:
        """The configured cosine threshold, else the embedder's calibrated one.

        A threshold only means something for one embedding model (see docs/guard.md).
        """
        if self._threshold is not None:
            return self._threshold
        return float(self._embedder.calibrated_threshold)

    @property
    def embedder_name(self) -> str:
        return self._embedder.name

    def expiry_cutoff(self) -> datetime:
        return utcnow() - timedelta(days=self.max_age_days)

    # --- lookup ---

    async def lookup(
        self,
        question: str,
        scopes: Sequence[Scope],
        *,
        record_use: bool = True,
        vector: np.ndarray | None = None,
        threshold: float | None = None,
    ) -> Lookup:
        """The entry that answers `question` in these scopes, if any.

        `record_use` counts the hit in usage_count (a real answer, not a staff search).
        `vector` skips embedding (the benchmark passes precomputed ones).
        """
        threshold = self.threshold if threshold is None else threshold
        if not scopes or not normalize_question(question):
            return Lookup(None, threshold, None)
        if self.auto_prune and time.monotonic() >= self._next_prune:
            self._next_prune = time.monotonic() + self.prune_interval_s
            await self.prune(limit=PRUNE_BATCH)
        keys = [scope.key for scope in scopes]
        async with self._database.session() as session:
            exact = await self._exact(session, question, scopes)
            if exact is not None:
                hit = Hit(exact, 1.0, "exact", None)
                if record_use:
                    await _count_use(session, exact.id, 1.0)
                return Lookup(hit, threshold, None)
        if vector is None:
            # Outside any transaction: no lock is held while the model runs.
            vector = (await self._embedder.embed([question], kind="query"))[0]
        async with self._database.session() as session:
            found = await self._vectors.search(
                session,
                collection=COLLECTION,
                model=self._embedder.name,
                keys=keys,
                query=vector,
                k=self.candidates,
            )
            scores = {hit.item_id: hit.score for hit in found}
            entries = await self._live_entries(session, list(scores), keys)
            candidates = [
                Candidate(entry, entry.question, scores[entry.id], entry.created_at)
                for entry in entries
            ]
            decision = decide(
                question,
                candidates,
                threshold=threshold,
                check=false_hit_check if self.check_enabled else None,
            )
            served = decision.served
            if served is None:
                return Lookup(None, threshold, decision)
            entry = served.candidate.item
            if record_use:
                await _count_use(session, entry.id, served.candidate.score)
            return Lookup(
                Hit(entry, served.candidate.score, "semantic", served.check), threshold, decision
            )

    async def _exact(
        self, session: AsyncSession, question: str, scopes: Sequence[Scope]
    ) -> GuardEntry | None:
        hashes = [key_hash(scope.key, question) for scope in scopes]
        result = await session.execute(
            self._live()
            .where(
                GuardEntry.key_hash.in_(hashes),
                GuardEntry.scope.in_([scope.key for scope in scopes]),
            )
            .order_by(GuardEntry.created_at.desc(), GuardEntry.id)
            .limit(1)
        )
        return result.scalar_one_or_none()

    async def _live_entries(
        self, session: AsyncSession, ids: list[str], keys: list[str]
    ) -> Sequence[GuardEntry]:
        if not ids:
            return []
        # The scope filter is repeated here on purpose: the index filtered by key already, but
        # an entry is only ever served from a scope the asker may read.
        result = await session.execute(
            self._live().where(GuardEntry.id.in_(ids), GuardEntry.scope.in_(keys))
        )
        return result.scalars().all()

    def _live(self) -> Select[Any]:
        """Entries that may be served: active and not expired (expired ones wait for prune)."""
        return select(GuardEntry).where(
            GuardEntry.status == "active", GuardEntry.created_at >= self.expiry_cutoff()
        )

    # --- learning ---

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
        supersedes (obsoletes) the older one. Raises NotLearnable."""
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
            async with self._database.session() as session:
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
                await self._vectors.upsert(
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
            await self._obsolete(session, old, reason="superseded", by=by)

    async def by_source_message(self, message_id: str) -> GuardEntry | None:
        async with self._database.session() as session:
            result = await session.execute(
                select(GuardEntry).where(GuardEntry.source_message_id == message_id)
            )
            return result.scalar_one_or_none()

    async def record_feedback(
        self, entry_id: str, *, rating: str, previous: str | None = None
    ) -> None:
        """A user's rating of a cached answer, counted on the entry for staff to audit.

        `previous` is that user's earlier rating of the same message, taken back.
        """
        async with self._database.session() as session:
            entry = await _for_update(session, entry_id)
            if entry is None:
                return
            feedback = {"up": 0, "down": 0, **((entry.meta or {}).get("feedback") or {})}
            feedback[rating] = int(feedback.get(rating, 0)) + 1
            if previous in ("up", "down"):
                feedback[previous] = max(0, int(feedback.get(previous, 0)) - 1)
            entry.meta = {**(entry.meta or {}), "feedback": feedback}

    # --- staff ---

    async def get(self, entry_id: str) -> GuardEntry | None:
        async with self._database.session() as session:
            return await session.get(GuardEntry, entry_id)

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
                or_(GuardEntry.scope == shared, GuardEntry.scope.startswith(shared + "|"))
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
        async with self._database.session() as session:
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
        async with self._database.session() as session:
            entry = await _for_update(session, entry_id)
            if entry is None:
                return None
            if entry.status != "obsolete":
                await self._obsolete(session, entry, reason=reason, by=by)
            return entry

    async def _obsolete(
        self, session: AsyncSession, entry: GuardEntry, *, reason: str, by: str | None
    ) -> None:
        entry.status = "obsolete"
        entry.obsoleted_at = utcnow()
        entry.meta = {**(entry.meta or {}), "obsolete": {"reason": reason, "by": by}}
        await self._vectors.delete(session, collection=COLLECTION, item_ids=[entry.id])

    async def delete(self, entry_id: str) -> bool:
        async with self._database.session() as session:
            deleted = await self._delete_ids(session, [entry_id])
        return deleted > 0

    async def prune(self, *, limit: int | None = None, dry_run: bool = False) -> int:
        """Delete entries older than max_age_days (any status) with their vectors; returns how
        many (would) go. `limit` bounds one call (lookups prune a batch at a time)."""
        cutoff = self.expiry_cutoff()
        total = 0
        while True:
            batch = PRUNE_BATCH if limit is None else min(PRUNE_BATCH, limit - total)
            if batch <= 0:
                break
            async with self._database.session() as session:
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
                    await self._delete_ids(session, ids)
            total += len(ids)
            if len(ids) < batch:
                break
        if total and not dry_run:
            log.info("guard.pruned", entries=total, max_age_days=self.max_age_days)
        return total

    async def _delete_ids(self, session: AsyncSession, ids: list[str]) -> int:
        await self._vectors.delete(session, collection=COLLECTION, item_ids=ids)
        result = await session.execute(delete(GuardEntry).where(GuardEntry.id.in_(ids)))
        return int(getattr(result, "rowcount", 0) or 0)

    async def count(self) -> dict[str, int]:
        """Entries per status (for stats and `eko cache list`)."""
        async with self._database.session() as session:
            result = await session.execute(
                select(GuardEntry.status, func.count()).group_by(GuardEntry.status)
            )
            return {status: int(n) for status, n in result.all()}


def judged_meta(judged: Judged[GuardEntry]) -> dict[str, Any]:
    """One candidate of a lookup, for staff search results."""
    return {
        "entry_id": judged.candidate.item.id,
        "score": round(judged.candidate.score, 4),
        "above_threshold": judged.above_threshold,
        "check": None if judged.check is None else judged.check.as_meta(),
        "servable": judged.servable,
    }


async def _count_use(session: AsyncSession, entry_id: str, score: float) -> None:
    # One UPDATE with the increment in SQL: concurrent hits never lose a count.
    await session.execute(
        update(GuardEntry)
        .where(GuardEntry.id == entry_id)
        .values(usage_count=GuardEntry.usage_count + usage_increment(score), last_used_at=utcnow())
    )


async def _for_update(session: AsyncSession, entry_id: str) -> GuardEntry | None:
    # Row lock on PostgreSQL (SQLite serializes writers anyway): read-modify-write of metadata.
    result = await session.execute(
        select(GuardEntry).where(GuardEntry.id == entry_id).with_for_update()
    )
    return result.scalar_one_or_none()


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
