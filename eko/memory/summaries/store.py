"""Writing one summary: row, parents, topics (and merge decisions) and vector, in one
transaction, so a crash leaves no half-written summary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eko.memory.clock import as_utc
from eko.memory.scopes import room_key
from eko.memory.summaries.segments import Segment
from eko.memory.topics import SameTopicProposal, Topics
from eko.store.db import Database
from eko.store.memory_models import Summary, SummaryParent
from eko.store.models import utcnow
from eko.store.vectors import VectorIndex

COLLECTION = "summary"


def summary_text(summary: Summary) -> str:
    """What is embedded and what the next level reads."""
    return f"{summary.conversation_summary}\n{summary.actions_summary}"


@dataclass(slots=True)
class SummaryDraft:
    """A segment's summary as the model wrote it, embedded, ready to be stored."""

    conversation: str
    actions: str
    topic_names: list[str]
    # vectors[0]: the summary's text; vectors[1:]: one per topic name.
    vectors: Any
    proposals: list[SameTopicProposal]
    meta: dict[str, Any]


class SummaryStore:
    def __init__(
        self, *, database: Database, vectors: VectorIndex, topics: Topics, embedding_model: str
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._topics = topics
        self._embedding_model = embedding_model

    async def store(self, room_id: str, segment: Segment, draft: SummaryDraft) -> Summary:
        scope = room_key(room_id)
        period_start, period_end = segment.period
        async with self._database.session() as session:
            summary = Summary(
                room_id=room_id,
                level=segment.level,
                char_range_start=segment.char_range_start,
                char_range_end=segment.char_range_end,
                first_seq=segment.first_seq,
                last_seq=segment.last_seq,
                conversation_summary=draft.conversation,
                actions_summary=draft.actions,
                char_count=len(draft.conversation) + len(draft.actions),
                period_start=as_utc(period_start),
                period_end=as_utc(period_end),
                meta=draft.meta,
                embedding_model=self._embedding_model,
                created_at=utcnow(),
            )
            session.add(summary)
            await session.flush()
            for position, child in enumerate(segment.children):
                session.add(
                    SummaryParent(summary_id=summary.id, parent_id=child.id, position=position)
                )
            await self._topics.link_names(
                session,
                scope=scope,
                summary_id=summary.id,
                names=draft.topic_names,
                vectors=draft.vectors[1:],
            )
            if draft.proposals:
                decisions = await self._topics.apply_proposals(
                    session, scope=scope, proposals=draft.proposals, source_summary_id=summary.id
                )
                summary.meta = {**draft.meta, "topic_decisions": [d.as_meta() for d in decisions]}
            await self._vectors.upsert(
                session,
                collection=COLLECTION,
                item_id=summary.id,
                key=scope,
                text=summary_text(summary),
                vector=draft.vectors[0],
                model=self._embedding_model,
            )
        return summary
