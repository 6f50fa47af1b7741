"""Topics named when summarizing: find-or-create, link to summaries, merge, relate, search.

Topics are scoped like the summaries that name them (a room's topics stay in the room). A name
resolves through the topic's own name, then its aliases, then follows merges to the canonical
topic. When an L(k+1) summary is made the model may say that two topics of its inputs are the
same: at or above `merge_min_confidence` the smaller merges into the larger (its name becomes
an alias, its summary links and related links move over, its row stays with merged_into_id);
between `related_min_confidence` and that, the two get a "related" link instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import structlog
from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.embed.base import Embedder
from eko.memory.text import normalize_key
from eko.memory.topic_types import (
    MAX_TOPIC_CHARS,
    SameTopicProposal,
    TopicDecision,
    TopicHit,
    TopicView,
    clean_topic_name,
)
from eko.store.db import Database
from eko.store.memory_models import SummaryTopic, Topic, TopicAlias, TopicLink
from eko.store.models import utcnow
from eko.store.vectors import VectorIndex

__all__ = [
    "COLLECTION",
    "MAX_TOPIC_CHARS",
    "SameTopicProposal",
    "TopicDecision",
    "TopicHit",
    "TopicView",
    "Topics",
    "clean_topic_name",
]

log = structlog.get_logger("eko.memory")

COLLECTION = "topic"
# Merge chains are short (each merge points at a canonical topic); this only guards a cycle.
MAX_MERGE_HOPS = 16


class Topics:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        merge_min_confidence: float,
        related_min_confidence: float,
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self.merge_min_confidence = merge_min_confidence
        self.related_min_confidence = related_min_confidence

    # --- inside a summary's transaction ---

    async def resolve(self, session: AsyncSession, *, scope: str, name: str) -> Topic | None:
        """The canonical topic a name (own name or alias) refers to, or None."""
        key = normalize_key(name)
        if not key:
            return None
        topic = (
            await session.execute(select(Topic).where(Topic.scope == scope, Topic.name_key == key))
        ).scalar_one_or_none()
        if topic is None:
            alias = (
                await session.execute(
                    select(TopicAlias).where(TopicAlias.scope == scope, TopicAlias.alias_key == key)
                )
            ).scalar_one_or_none()
            if alias is not None:
                topic = await session.get(Topic, alias.topic_id)
        return await self.canonical(session, topic) if topic is not None else None

    async def canonical(self, session: AsyncSession, topic: Topic) -> Topic:
        hops = 0
        while topic.merged_into_id is not None and hops < MAX_MERGE_HOPS:
            target = await session.get(Topic, topic.merged_into_id)
            if target is None:
                break
            topic, hops = target, hops + 1
        return topic

    async def link_names(
        self,
        session: AsyncSession,
        *,
        scope: str,
        summary_id: str,
        names: Sequence[str],
        vectors: np.ndarray,
    ) -> list[Topic]:
        """Find or create the topics named (vectors[i] embeds names[i]) and link the summary."""
        linked: dict[str, Topic] = {}
        for name, vector in zip(names, vectors, strict=True):
            clean = clean_topic_name(name)
            if not normalize_key(clean):
                continue
            topic = await self.resolve(session, scope=scope, name=clean)
            if topic is None:
                topic = Topic(
                    scope=scope,
                    name=clean,
                    name_key=normalize_key(clean),
                    embedding_model=self._embedder.name,
                    created_at=utcnow(),
                )
                session.add(topic)
                await session.flush()
                await self._vectors.upsert(
                    session,
                    collection=COLLECTION,
                    item_id=topic.id,
                    key=scope,
                    text=clean,
                    vector=vector,
                    model=self._embedder.name,
                )
            linked[topic.id] = topic
        for topic_id in linked:
            session.add(SummaryTopic(summary_id=summary_id, topic_id=topic_id))
        await session.flush()
        return list(linked.values())

    async def apply_proposals(
        self,
        session: AsyncSession,
        *,
        scope: str,
        proposals: Sequence[SameTopicProposal],
        source_summary_id: str,
    ) -> list[TopicDecision]:
        decisions = []
        for proposal in proposals:
            decisions.append(await self._apply(session, scope, proposal, source_summary_id))
        return decisions

    async def _apply(
        self, session: AsyncSession, scope: str, proposal: SameTopicProposal, source: str
    ) -> TopicDecision:
        confidence = min(1.0, max(0.0, float(proposal.confidence)))

        def decided(action: str, reason: str = "") -> TopicDecision:
            return TopicDecision(action, proposal.first, proposal.second, confidence, reason)

        first = await self.resolve(session, scope=scope, name=proposal.first)
        second = await self.resolve(session, scope=scope, name=proposal.second)
        if first is None or second is None:
            return decided("ignored", "unknown topic")
        if first.id == second.id:
            return decided("ignored", "already the same topic")
        if confidence >= self.merge_min_confidence:
            await self.merge(session, first, second, confidence=confidence)
            return decided("merged")
        if confidence >= self.related_min_confidence:
            await self.relate(session, first, second, confidence=confidence, source=source)
            return decided("related")
        return decided("ignored", "low confidence")

    async def merge(
        self, session: AsyncSession, first: Topic, second: Topic, *, confidence: float
    ) -> Topic:
        """Merge the topic with fewer summaries into the other; returns the one that stays."""
        counts = await self._summary_counts(session, [first.id, second.id])
        target, source = first, second
        if _keep_rank(second, counts) > _keep_rank(first, counts):
            target, source = second, first
        # Summary links: add the target where missing, then drop the source's.
        source_summaries = set(
            (
                await session.execute(
                    select(SummaryTopic.summary_id).where(SummaryTopic.topic_id == source.id)
                )
            ).scalars()
        )
        target_summaries = set(
            (
                await session.execute(
                    select(SummaryTopic.summary_id).where(SummaryTopic.topic_id == target.id)
                )
            ).scalars()
        )
        for summary_id in sorted(source_summaries - target_summaries):
            session.add(SummaryTopic(summary_id=summary_id, topic_id=target.id))
        await session.execute(delete(SummaryTopic).where(SummaryTopic.topic_id == source.id))
        # Related links move to the target (a link between the two disappears).
        links = (
            (
                await session.execute(
                    select(TopicLink).where(
                        or_(TopicLink.topic_id == source.id, TopicLink.related_id == source.id)
                    )
                )
            )
            .scalars()
            .all()
        )
        moved = [
            (
                target.id if link.topic_id == source.id else link.topic_id,
                target.id if link.related_id == source.id else link.related_id,
                link.confidence,
                link.source_summary_id,
            )
            for link in links
        ]
        for link in links:
            await session.delete(link)
        await session.flush()
        for a, b, link_confidence, link_source in moved:
            if a != b:
                await self._add_link(session, a, b, link_confidence, link_source)
        # Names: the source's aliases and its own name become the target's aliases.
        await session.execute(
            update(TopicAlias).where(TopicAlias.topic_id == source.id).values(topic_id=target.id)
        )
        session.add(
            TopicAlias(
                topic_id=target.id,
                scope=source.scope,
                alias=source.name,
                alias_key=source.name_key,
                merged_from_id=source.id,
                created_at=utcnow(),
            )
        )
        source.merged_into_id = target.id
        source.merge_confidence = confidence
        source.merged_at = utcnow()
        # Topics that had merged into the source now point at the target directly.
        await session.execute(
            update(Topic).where(Topic.merged_into_id == source.id).values(merged_into_id=target.id)
        )
        await session.flush()
        log.info(
            "memory.topic.merged",
            source=source.name,
            target=target.name,
            confidence=round(confidence, 3),
        )
        return target

    async def relate(
        self,
        session: AsyncSession,
        first: Topic,
        second: Topic,
        *,
        confidence: float,
        source: str | None,
    ) -> None:
        await self._add_link(session, first.id, second.id, confidence, source)
        await session.flush()

    async def _add_link(
        self, session: AsyncSession, a: str, b: str, confidence: float, source: str | None
    ) -> None:
        low, high = sorted((a, b))
        existing = await session.get(TopicLink, (low, high))
        if existing is not None:
            existing.confidence = max(existing.confidence, confidence)
            return
        session.add(
            TopicLink(
                topic_id=low,
                related_id=high,
                confidence=confidence,
                source_summary_id=source,
                created_at=utcnow(),
            )
        )

    async def _summary_counts(self, session: AsyncSession, ids: Sequence[str]) -> dict[str, int]:
        rows = await session.execute(
            select(SummaryTopic.topic_id, func.count())
            .where(SummaryTopic.topic_id.in_(list(ids)))
            .group_by(SummaryTopic.topic_id)
        )
        return {topic_id: int(count) for topic_id, count in rows}

    async def names_of_summaries(
        self, session: AsyncSession, summary_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """Canonical topic names per summary (links always point at canonical topics)."""
        if not summary_ids:
            return {}
        rows = await session.execute(
            select(SummaryTopic.summary_id, Topic.name)
            .join(Topic, Topic.id == SummaryTopic.topic_id)
            .where(SummaryTopic.summary_id.in_(list(summary_ids)))
            .order_by(SummaryTopic.summary_id, Topic.name)
        )
        names: dict[str, list[str]] = {}
        for summary_id, name in rows:
            names.setdefault(summary_id, []).append(name)
        return names

    # --- reads ---

    async def find(self, *, scope: str, ref: str) -> Topic | None:
        """A topic by id or by name/alias, resolved to its canonical topic."""
        async with self._database.session() as session:
            topic = await session.get(Topic, ref)
            if topic is not None and topic.scope == scope:
                return await self.canonical(session, topic)
            return await self.resolve(session, scope=scope, name=ref)

    async def summary_ids(self, topic_id: str, *, limit: int = 5000) -> list[str]:
        """Summaries linked to a canonical topic (merged aliases' links were moved to it)."""
        async with self._database.session() as session:
            rows = await session.execute(
                select(SummaryTopic.summary_id)
                .where(SummaryTopic.topic_id == topic_id)
                .limit(limit)
            )
            return list(rows.scalars())

    async def list_topics(self, *, scope: str, include_merged: bool = False) -> list[TopicView]:
        async with self._database.session() as session:
            query = select(Topic).where(Topic.scope == scope)
            if not include_merged:
                query = query.where(Topic.merged_into_id.is_(None))
            topics = list((await session.execute(query.order_by(Topic.name))).scalars())
            ids = [topic.id for topic in topics]
            if not ids:
                return []
            views = {topic.id: TopicView(topic=topic) for topic in topics}
            aliases = await session.execute(
                select(TopicAlias.topic_id, TopicAlias.alias)
                .where(TopicAlias.topic_id.in_(ids))
                .order_by(TopicAlias.alias)
            )
            for topic_id, alias in aliases:
                views[topic_id].aliases.append(alias)
            links = (
                (
                    await session.execute(
                        select(TopicLink).where(
                            or_(TopicLink.topic_id.in_(ids), TopicLink.related_id.in_(ids))
                        )
                    )
                )
                .scalars()
                .all()
            )
            by_id = {topic.id: topic for topic in topics}
            for link in links:
                pairs = ((link.topic_id, link.related_id), (link.related_id, link.topic_id))
                for own, other in pairs:
                    if own in views:
                        other_topic = by_id.get(other) or await session.get(Topic, other)
                        if other_topic is not None:
                            views[own].related.append((other_topic, link.confidence))
            for topic_id, count in (await self._summary_counts(session, ids)).items():
                views[topic_id].summary_count = count
            return list(views.values())

    async def search(self, *, scope: str, query: str, k: int = 5) -> list[TopicHit]:
        """Topics whose name (or a merged topic's name) is closest to `query`; canonical ones."""
        vector = (await self._embedder.embed([query], kind="query"))[0]
        async with self._database.session() as session:
            hits = await self._vectors.search(
                session,
                collection=COLLECTION,
                model=self._embedder.name,
                keys=[scope],
                query=vector,
                k=k * 3,
            )
            found: dict[str, TopicHit] = {}
            for hit in hits:
                topic = await session.get(Topic, hit.item_id)
                if topic is None:
                    continue
                topic = await self.canonical(session, topic)
                if topic.id not in found:
                    found[topic.id] = TopicHit(topic=topic, score=hit.score)
            return list(found.values())[:k]


def _keep_rank(topic: Topic, counts: dict[str, int]) -> tuple[int, float]:
    """Which of two topics stays: more summaries, then the older (established) name."""
    created = topic.created_at.timestamp() if topic.created_at else 0.0
    return counts.get(topic.id, 0), -created
