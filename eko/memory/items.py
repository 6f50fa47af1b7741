"""Facts, self-knowledge and goals: write with dedup, search within visible scopes, goal life.

A write deduplicates: an item of the same kind, scope and subject whose text is at least
`dedup_min_score` similar is updated (mention counted, text refreshed) instead of a new row
being added — the seed's "Qui est Corentin ?" ×5 collapses into one goal. Candidates are read
exactly (the few items of that scope, kind and subject, with their stored vectors), not through
the approximate index, so a duplicate is never missed because of ANN recall.

Goals live as open → asked (the assistant posed the question) → answered (the answer became a
fact, linked by answer_item_id). An answered goal is kept: a later rephrasing of the same
curiosity folds into it instead of reopening a question already settled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.memory.text import clip, normalize_key, one_line
from eko.store.db import Database
from eko.store.memory_models import GOAL_STATUSES, MEMORY_KINDS, MemoryItem
from eko.store.models import Embedding, utcnow
from eko.store.vectors import VectorIndex

log = structlog.get_logger("eko.memory")

COLLECTION = "memory"
# Same-subject items compared on each write: the most recently updated ones.
DEDUP_CANDIDATES = 200
MAX_SUBJECT_CHARS = 200
MAX_CONTENT_CHARS = 2000
# Vector hits fetched per wanted result: kinds and statuses are filtered after the search.
SEARCH_OVERFETCH = 4


@dataclass(frozen=True, slots=True)
class NewItem:
    kind: str  # fact | self | goal
    subject: str
    content: str
    confidence: float = 1.0
    source_message_id: str | None = None
    source_room_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in MEMORY_KINDS:
            raise ValueError(f"kind must be one of {MEMORY_KINDS}, not {self.kind!r}")
        if not one_line(self.content):
            raise ValueError("an item needs content")


@dataclass(frozen=True, slots=True)
class WriteResult:
    item: MemoryItem
    created: bool
    # Similarity to the item it was folded into (None when created).
    similarity: float | None = None


@dataclass(frozen=True, slots=True)
class ItemHit:
    item: MemoryItem
    score: float


class MemoryItems:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        dedup_min_score: float,
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self.dedup_min_score = dedup_min_score
        # One writer per scope at a time in this process: two concurrent writes of the same
        # curiosity would both see "no duplicate" and both insert.
        self._locks: dict[str, asyncio.Lock] = {}

    # --- writes ---

    async def remember(self, new: NewItem, *, scope: str) -> WriteResult:
        return (await self.remember_many([new], scope=scope))[0]

    async def remember_many(self, items: Sequence[NewItem], *, scope: str) -> list[WriteResult]:
        """Write each item with dedup, in order (a later item may fold into an earlier one)."""
        if not items:
            return []
        texts = [_clean_content(item.content) for item in items]
        vectors = await self._embedder.embed(texts, kind="passage")
        results = []
        async with self._lock(scope):
            for item, text, vector in zip(items, texts, vectors, strict=True):
                async with self._database.session() as session:
                    results.append(await self._write(session, item, text, vector, scope))
        return results

    async def _write(
        self, session: AsyncSession, new: NewItem, text: str, vector: np.ndarray, scope: str
    ) -> WriteResult:
        subject = one_line(new.subject)[:MAX_SUBJECT_CHARS]
        subject_key = normalize_key(subject)
        match, similarity = await self._closest(session, new.kind, scope, subject_key, vector)
        now = utcnow()
        confidence = _unit(new.confidence)
        if match is not None and similarity is not None:
            match.mention_count += 1
            match.confidence = max(match.confidence, confidence)
            match.updated_at = now
            if new.source_message_id:
                match.source_message_id = new.source_message_id
            # A goal keeps its first wording (and an answered goal stays answered); facts and
            # self-knowledge take the newest statement, which may correct the old one.
            if match.kind != "goal" and match.content != text:
                match.content = text
                match.update_count += 1
                await self._index(session, match, vector)
            log.info(
                "memory.item.deduplicated",
                item_id=match.id,
                kind=match.kind,
                similarity=round(similarity, 4),
            )
            return WriteResult(item=match, created=False, similarity=similarity)
        item = MemoryItem(
            kind=new.kind,
            scope=scope,
            subject=subject,
            subject_key=subject_key,
            content=text,
            confidence=confidence,
            status="open" if new.kind == "goal" else None,
            source_message_id=new.source_message_id,
            source_room_id=new.source_room_id,
            mention_count=1,
            update_count=0,
            embedding_model=self._embedder.name,
            created_at=now,
            updated_at=now,
        )
        session.add(item)
        await session.flush()
        await self._index(session, item, vector)
        return WriteResult(item=item, created=True)

    async def _closest(
        self, session: AsyncSession, kind: str, scope: str, subject_key: str, vector: np.ndarray
    ) -> tuple[MemoryItem | None, float | None]:
        candidates = (
            (
                await session.execute(
                    select(MemoryItem)
                    .where(
                        MemoryItem.scope == scope,
                        MemoryItem.kind == kind,
                        MemoryItem.subject_key == subject_key,
                    )
                    .order_by(MemoryItem.updated_at.desc())
                    .limit(DEDUP_CANDIDATES)
                )
            )
            .scalars()
            .all()
        )
        if not candidates:
            return None, None
        by_id = {item.id: item for item in candidates}
        rows = await session.execute(
            select(Embedding.item_id, Embedding.vector).where(
                Embedding.collection == COLLECTION,
                Embedding.model == self._embedder.name,
                Embedding.item_id.in_(list(by_id)),
            )
        )
        best: tuple[MemoryItem | None, float | None] = (None, None)
        for item_id, stored in rows:
            other = np.asarray(stored, dtype=np.float32)
            if other.shape != vector.shape:
                continue
            score = float(other @ vector / (np.linalg.norm(other) * np.linalg.norm(vector)))
            if score >= self.dedup_min_score and (best[1] is None or score > best[1]):
                best = (by_id[item_id], score)
        return best

    async def _index(self, session: AsyncSession, item: MemoryItem, vector: np.ndarray) -> None:
        await self._vectors.upsert(
            session,
            collection=COLLECTION,
            item_id=item.id,
            key=item.scope,
            text=item.content,
            vector=vector,
            model=self._embedder.name,
        )

    def _lock(self, scope: str) -> asyncio.Lock:
        lock = self._locks.get(scope)
        if lock is None:
            lock = self._locks[scope] = asyncio.Lock()
        return lock

    # --- goals ---

    async def mark_asked(self, goal_id: str) -> MemoryItem | None:
        """The assistant posed this curiosity (e.g. the reflection posted it)."""
        async with self._database.session() as session:
            goal = await session.get(MemoryItem, goal_id)
            if goal is None or goal.kind != "goal" or goal.status == "answered":
                return goal
            goal.status = "asked"
            goal.asked_at = goal.updated_at = utcnow()
            return goal

    async def answer_goal(
        self,
        goal_id: str,
        *,
        answer: str,
        scope: str,
        source_message_id: str | None = None,
        source_room_id: str | None = None,
        confidence: float = 0.8,
    ) -> WriteResult | None:
        """Curiosity → fact: the answer is remembered as a fact (with dedup) about the goal's
        subject, and the goal is closed. None when the goal is unknown or already answered."""
        async with self._database.session() as session:
            goal = await session.get(MemoryItem, goal_id)
            if goal is None or goal.kind != "goal" or goal.status == "answered":
                return None
            subject = goal.subject
        fact = await self.remember(
            NewItem(
                kind="fact",
                subject=subject,
                content=answer,
                confidence=confidence,
                source_message_id=source_message_id,
                source_room_id=source_room_id,
            ),
            scope=scope,
        )
        async with self._database.session() as session:
            goal = await session.get(MemoryItem, goal_id)
            if goal is not None and goal.status != "answered":
                goal.status = "answered"
                goal.answer_item_id = fact.item.id
                goal.answered_at = goal.updated_at = utcnow()
        log.info("memory.goal.answered", goal_id=goal_id, fact_id=fact.item.id)
        return fact

    async def open_goals(self, *, keys: Sequence[str], limit: int = 10) -> list[MemoryItem]:
        """Open or asked goals in these scopes, most recently stated first."""
        if not keys:
            return []
        async with self._database.session() as session:
            result = await session.execute(
                select(MemoryItem)
                .where(
                    MemoryItem.scope.in_(list(keys)),
                    MemoryItem.kind == "goal",
                    MemoryItem.status.in_(["open", "asked"]),
                )
                .order_by(MemoryItem.updated_at.desc(), MemoryItem.id)
                .limit(limit)
            )
            return list(result.scalars().all())

    # --- reads ---

    async def search(
        self,
        *,
        keys: Sequence[str],
        query: str | None = None,
        vector: np.ndarray | None = None,
        kinds: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        k: int = 5,
        min_score: float | None = None,
    ) -> list[ItemHit]:
        """Items most similar to `query` (or a ready query `vector`) within `keys`, best first."""
        if not keys or k <= 0:
            return []
        if vector is None:
            if query is None:
                raise ValueError("search needs a query or a vector")
            vector = (await self._embedder.embed([query], kind="query"))[0]
        async with self._database.session() as session:
            hits = await self._vectors.search(
                session,
                collection=COLLECTION,
                model=self._embedder.name,
                keys=list(keys),
                query=vector,
                k=k * SEARCH_OVERFETCH if (kinds or statuses) else k,
                min_score=min_score,
            )
            if not hits:
                return []
            rows = await session.execute(
                select(MemoryItem).where(MemoryItem.id.in_([hit.item_id for hit in hits]))
            )
            by_id = {item.id: item for item in rows.scalars()}
        found = []
        for hit in hits:
            item = by_id.get(hit.item_id)
            if item is None or item.scope not in keys:
                continue
            if kinds and item.kind not in kinds:
                continue
            if statuses and item.status not in statuses:
                continue
            found.append(ItemHit(item=item, score=hit.score))
        return found[:k]

    async def list_items(
        self,
        *,
        keys: Sequence[str] | None,
        kind: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[MemoryItem]:
        """Newest first. keys=None lists every scope (staff, the local CLI)."""
        if keys is not None and not keys:
            return []
        query = select(MemoryItem)
        if keys is not None:
            query = query.where(MemoryItem.scope.in_(list(keys)))
        if kind is not None:
            query = query.where(MemoryItem.kind == kind)
        if status is not None:
            if status not in GOAL_STATUSES:
                raise ValueError(f"status must be one of {GOAL_STATUSES}")
            query = query.where(MemoryItem.status == status)
        query = query.order_by(MemoryItem.updated_at.desc(), MemoryItem.id)
        async with self._database.session() as session:
            result = await session.execute(query.limit(limit).offset(offset))
            return list(result.scalars().all())

    async def all_scopes(self) -> list[str]:
        """Every scope that holds an item (what "all scopes" means for a staff search)."""
        async with self._database.session() as session:
            rows = await session.execute(select(MemoryItem.scope).distinct())
            return sorted(rows.scalars())

    async def get(self, item_id: str) -> MemoryItem | None:
        async with self._database.session() as session:
            return await session.get(MemoryItem, item_id)

    async def delete(self, item_id: str) -> bool:
        async with self._database.session() as session:
            item = await session.get(MemoryItem, item_id)
            if item is None:
                return False
            await self._vectors.delete(session, collection=COLLECTION, item_ids=[item_id])
            await session.delete(item)
            return True


def _clean_content(content: str) -> str:
    return clip(one_line(content), MAX_CONTENT_CHARS)


def _unit(value: float) -> float:
    return min(1.0, max(0.0, float(value)))
