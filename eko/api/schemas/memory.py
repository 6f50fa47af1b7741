"""Request and response bodies of the memory routes (items, summaries, topics, context)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.memory.context_parts import DualContext
from eko.memory.summaries.reads import SummaryView
from eko.memory.topics import TopicView
from eko.store.memory_models import MemoryItem

ItemKind = Literal["fact", "self", "goal"]
GoalStatus = Literal["open", "asked", "answered"]


class MemoryItemOut(BaseModel):
    id: str
    kind: str
    scope: str
    subject: str
    content: str
    confidence: float
    status: str | None
    source_message_id: str | None
    source_room_id: str | None
    answer_item_id: str | None
    mention_count: int
    update_count: int
    created_at: datetime
    updated_at: datetime
    asked_at: datetime | None
    answered_at: datetime | None

    @classmethod
    def of(cls, item: MemoryItem) -> MemoryItemOut:
        return cls(
            id=item.id,
            kind=item.kind,
            scope=item.scope,
            subject=item.subject,
            content=item.content,
            confidence=item.confidence,
            status=item.status,
            source_message_id=item.source_message_id,
            source_room_id=item.source_room_id,
            answer_item_id=item.answer_item_id,
            mention_count=item.mention_count,
            update_count=item.update_count,
            created_at=item.created_at,
            updated_at=item.updated_at,
            asked_at=item.asked_at,
            answered_at=item.answered_at,
        )


class SourceTurnOut(BaseModel):
    """A message an item was learned from, or the reply to it."""

    id: str
    room_id: str
    seq: int
    role: str
    sender_public_id: str | None
    content: str
    created_at: datetime


class MemoryItemSources(BaseModel):
    item_id: str
    # The turn the item was learned from (the user's message, then the reply to it); empty
    # when the item has no source or the caller may not see the source's room.
    turns: list[SourceTurnOut]
    # True when a source exists but its room is out of the caller's sight.
    hidden: bool = False


class MemoryItemHit(BaseModel):
    item: MemoryItemOut
    score: float


class MemoryItemCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ItemKind
    subject: InputText = Field(default="", max_length=200)
    content: InputText = Field(min_length=1, max_length=2000)
    # "user:<your public id>" (default), "room:<room id>" of a room you are in, or "global"
    # (staff only).
    scope: InputText | None = Field(default=None, max_length=200)
    confidence: float = Field(default=1.0, ge=0, le=1)


class MemoryItemWritten(BaseModel):
    item: MemoryItemOut
    # False when the write folded into an existing near-duplicate (dedup).
    created: bool
    similarity: float | None = None


class SummaryOut(BaseModel):
    id: str
    room_id: str
    level: int
    char_range_start: int
    char_range_end: int
    first_seq: int
    last_seq: int
    conversation_summary: str
    actions_summary: str
    char_count: int
    period_start: datetime
    period_end: datetime
    parent_ids: list[str]
    topics: list[str]
    metadata: dict[str, Any]
    created_at: datetime
    similarity: float | None = None

    @classmethod
    def of(cls, view: SummaryView) -> SummaryOut:
        summary = view.summary
        return cls(
            id=summary.id,
            room_id=summary.room_id,
            level=summary.level,
            char_range_start=summary.char_range_start,
            char_range_end=summary.char_range_end,
            first_seq=summary.first_seq,
            last_seq=summary.last_seq,
            conversation_summary=summary.conversation_summary,
            actions_summary=summary.actions_summary,
            char_count=summary.char_count,
            period_start=summary.period_start,
            period_end=summary.period_end,
            parent_ids=view.parent_ids,
            topics=view.topics,
            metadata=summary.meta or {},
            created_at=summary.created_at,
            similarity=view.similarity,
        )


class RelatedTopicOut(BaseModel):
    id: str
    name: str
    confidence: float


class TopicOut(BaseModel):
    id: str
    name: str
    aliases: list[str]
    related: list[RelatedTopicOut]
    summary_count: int
    merged_into_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, view: TopicView) -> TopicOut:
        return cls(
            id=view.topic.id,
            name=view.topic.name,
            aliases=view.aliases,
            related=[
                RelatedTopicOut(id=topic.id, name=topic.name, confidence=confidence)
                for topic, confidence in view.related
            ],
            summary_count=view.summary_count,
            merged_into_id=view.topic.merged_into_id,
            created_at=view.topic.created_at,
        )


class TopicHitOut(BaseModel):
    id: str
    name: str
    score: float


class DualContextOut(BaseModel):
    text: str
    stats: dict[str, Any]
    parts: dict[str, Any]

    @classmethod
    def of(cls, context: DualContext) -> DualContextOut:
        data = context.as_dict()
        return cls(text=data["text"], stats=data["stats"], parts=data["parts"])
