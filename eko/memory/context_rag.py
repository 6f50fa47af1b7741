"""Step 2 of the dual context, "Relevant Past Context": the room's summaries closest to the
message, scored similarity × level boost × (0.5 + 0.5·e^(−age/decay)), top `rag_max_summaries`.
Summaries after the message, or that only cover the recent window (shown verbatim), are left
out; a topic restricts them to that topic's summaries and its merged aliases'.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import select

from eko.config import Settings
from eko.embed.base import Embedder
from eko.memory.clock import age_days
from eko.memory.context_parts import RecentPart, SummaryPart, render_summary
from eko.memory.scopes import room_key
from eko.memory.summaries.reads import scored_summaries
from eko.memory.topics import Topics
from eko.store.db import Database
from eko.store.memory_models import Summary
from eko.store.models import Room
from eko.store.vectors import VectorIndex


def level_boost(level: int, table: dict[int, float], step: float) -> float:
    """The configured boost of a level; above the highest configured level, + step per level."""
    if level in table:
        return table[level]
    if not table:
        return 1.0
    top = max(table)
    if level > top:
        return table[top] + step * (level - top)
    return 1.0


def recency_factor(period_end: datetime, now: datetime, decay_days: float) -> float:
    """0.5 + 0.5·e^(−age/decay): 1.0 today, 0.68 after 7 days, 0.57 after 14 (decay 7)."""
    return 0.5 + 0.5 * math.exp(-age_days(period_end, now) / decay_days)


class SummaryRecall:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        topics: Topics,
        settings: Settings,
        min_score: float,
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self._topics = topics
        self._settings = settings
        self.min_score = min_score

    async def recall(
        self,
        room: Room,
        vector: np.ndarray,
        recent: RecentPart,
        before_seq: int | None,
        now: datetime,
        topic: str | None,
        stats: dict[str, Any],
    ) -> list[SummaryPart]:
        """The best summaries for `vector`, best first; `stats` gets what was considered."""
        settings = self._settings
        key = room_key(room.id)
        found = await scored_summaries(
            self._database,
            self._vectors,
            self._topics,
            key=key,
            vector=vector,
            model=self._embedder.name,
            topic=topic,
            k=settings.rag_candidates,
        )
        if topic is not None:
            stats["topic"] = found[1] if found is not None else None
        if found is None:
            return []
        scored = found[0]
        candidates = {i: s for i, s in scored.items() if s >= self.min_score}
        stats["summaries_considered"] = len(scored)
        stats["summaries_above_min_score"] = len(candidates)
        if not candidates:
            return []
        async with self._database.session() as session:
            rows = (
                await session.execute(
                    select(Summary).where(
                        Summary.id.in_(list(candidates)), Summary.room_id == room.id
                    )
                )
            ).scalars()
            summaries = list(rows.all())
            topic_names = await self._topics.names_of_summaries(session, [s.id for s in summaries])
        parts = []
        skipped_recent = 0
        for summary in summaries:
            if before_seq is not None and summary.first_seq >= before_seq:
                continue  # about messages after the one being answered
            if recent.char_start is not None and summary.char_range_start >= recent.char_start:
                skipped_recent += 1
                continue  # only covers the recent window, which is shown verbatim
            similarity = candidates[summary.id]
            boost = level_boost(
                summary.level, settings.rag_level_boost, settings.rag_level_boost_step
            )
            recency = (
                recency_factor(summary.period_end, now, settings.rag_recency_decay_days)
                if settings.rag_recency_boost
                else 1.0
            )
            names = topic_names.get(summary.id, [])
            parts.append(
                SummaryPart(
                    summary_id=summary.id,
                    level=summary.level,
                    char_range_start=summary.char_range_start,
                    char_range_end=summary.char_range_end,
                    similarity=similarity,
                    level_boost=boost,
                    recency=recency,
                    score=similarity * boost * recency,
                    topics=names,
                    text=render_summary(summary, names, now),
                )
            )
        stats["summaries_skipped_recent"] = skipped_recent
        parts.sort(key=lambda part: (-part.score, part.char_range_start, -part.level))
        return parts[: settings.rag_max_summaries]
