"""Reading a room's summaries: list by level, search by text (optionally within one topic)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.memory.scopes import room_key
from eko.memory.summaries.store import COLLECTION
from eko.memory.topics import Topics
from eko.store.db import Database
from eko.store.memory_models import Summary, SummaryParent
from eko.store.models import Embedding
from eko.store.vectors import VectorIndex


@dataclass(slots=True)
class SummaryView:
    summary: Summary
    parent_ids: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    similarity: float | None = None


async def exact_scores(
    session: AsyncSession, *, summary_ids: Sequence[str], vector: np.ndarray, model: str
) -> dict[str, float]:
    """Cosines of these summaries' stored vectors: exact, for a small set (one topic's)."""
    if not summary_ids:
        return {}
    rows = await session.execute(
        select(Embedding.item_id, Embedding.vector).where(
            Embedding.collection == COLLECTION,
            Embedding.model == model,
            Embedding.item_id.in_(list(summary_ids)),
        )
    )
    scores = {}
    norm = float(np.linalg.norm(vector))
    for item_id, stored in rows:
        other = np.asarray(stored, dtype=np.float32)
        if other.shape == vector.shape:
            scores[item_id] = float(other @ vector / (np.linalg.norm(other) * norm))
    return scores


async def scored_summaries(
    database: Database,
    vectors: VectorIndex,
    topics: Topics,
    *,
    key: str,
    vector: np.ndarray,
    model: str,
    topic: str | None,
    k: int,
) -> tuple[dict[str, float], str | None] | None:
    """The room's summaries (scope `key`) scored against `vector`, with the topic's name: one
    topic's summaries exactly, else the `k` nearest from the vector index. None when `topic`
    names no topic of the room."""
    if topic is not None:
        found = await topics.find(scope=key, ref=topic)
        if found is None:
            return None
        ids = await topics.summary_ids(found.id)
        async with database.session() as session:
            exact = await exact_scores(session, summary_ids=ids, vector=vector, model=model)
        return exact, found.name
    async with database.session() as session:
        hits = await vectors.search(
            session, collection=COLLECTION, model=model, keys=[key], query=vector, k=k
        )
    return {hit.item_id: hit.score for hit in hits}, None


class SummaryReader:
    def __init__(
        self, *, database: Database, vectors: VectorIndex, embedder: Embedder, topics: Topics
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self._topics = topics

    async def list_summaries(
        self, room_id: str, *, level: int | None = None, limit: int = 50, offset: int = 0
    ) -> list[SummaryView]:
        """Chronological within a level; by level then time when no level is given."""
        query = select(Summary).where(Summary.room_id == room_id)
        if level is not None:
            query = query.where(Summary.level == level)
        query = query.order_by(Summary.level, Summary.char_range_start).limit(limit).offset(offset)
        async with self._database.session() as session:
            summaries = list((await session.execute(query)).scalars().all())
            return await self._views(session, summaries)

    async def search(
        self, room_id: str, *, query: str, topic: str | None = None, k: int = 5
    ) -> list[SummaryView]:
        """The k summaries most similar to `query`; within `topic` (id or name, merged aliases
        included) when given. Raises LookupError for an unknown topic."""
        vector = (await self._embedder.embed([query], kind="query"))[0]
        scored = await scored_summaries(
            self._database,
            self._vectors,
            self._topics,
            key=room_key(room_id),
            vector=vector,
            model=self._embedder.name,
            topic=topic,
            k=k,
        )
        if scored is None:
            raise LookupError(f"no topic {topic!r} in this room")
        scores, _ = scored
        best = sorted(scores.items(), key=lambda pair: -pair[1])[:k]
        if not best:
            return []
        async with self._database.session() as session:
            rows = await session.execute(
                select(Summary).where(
                    Summary.id.in_([item_id for item_id, _ in best]), Summary.room_id == room_id
                )
            )
            by_id = {summary.id: summary for summary in rows.scalars()}
            views = await self._views(
                session, [by_id[item_id] for item_id, _ in best if item_id in by_id]
            )
        for view in views:
            view.similarity = scores[view.summary.id]
        return views

    async def _views(self, session: AsyncSession, summaries: list[Summary]) -> list[SummaryView]:
        ids = [summary.id for summary in summaries]
        views = {summary.id: SummaryView(summary=summary) for summary in summaries}
        if ids:
            parents = await session.execute(
                select(SummaryParent.summary_id, SummaryParent.parent_id)
                .where(SummaryParent.summary_id.in_(ids))
                .order_by(SummaryParent.summary_id, SummaryParent.position)
            )
            for summary_id, parent_id in parents:
                views[summary_id].parent_ids.append(parent_id)
            for summary_id, names in (await self._topics.names_of_summaries(session, ids)).items():
                views[summary_id].topics = names
        return [views[summary_id] for summary_id in ids]
