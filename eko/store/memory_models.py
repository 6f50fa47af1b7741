"""Memory tables: facts / self / goals, hierarchical summaries, topics and their links.

Vectors live in the shared `embeddings` table: collection "memory" (item_id = memory_items.id),
"summary" (summaries.id) and "topic" (topics.id), each with key = the row's visibility scope
("user:<public id>", "room:<id>" or "global"; see eko/memory/scopes.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, new_id, utcnow

# BIGINT on PostgreSQL, INTEGER on SQLite (same as eko.store.models' ids and char counts).
BigCount = BigInteger().with_variant(Integer(), "sqlite")

MEMORY_KINDS = ("fact", "self", "goal")
GOAL_STATUSES = ("open", "asked", "answered")


class MemoryItem(Base):
    """One fact (people, projects, the world), self-knowledge (the assistant about itself) or
    goal (an open curiosity, the seed's "Qui est Corentin ?")."""

    __tablename__ = "memory_items"
    __table_args__ = (
        # Dedup looks up the items of one scope, kind and subject.
        Index("ix_memory_items_dedup", "scope", "kind", "subject_key"),
        # Listings per scope and kind, newest first; goals by status.
        Index("ix_memory_items_listing", "scope", "kind", "updated_at"),
        Index("ix_memory_items_source", "source_message_id"),  # facts drawn from a turn
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(8))  # fact | self | goal
    scope: Mapped[str] = mapped_column(String(200))
    subject: Mapped[str] = mapped_column(String(200))
    # casefolded, accent- and punctuation-free subject: "Corentin" == "corentin".
    subject_key: Mapped[str] = mapped_column(String(200))
    content: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float, default=1.0)
    # goals only: open | asked | answered
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    source_message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    source_room_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # A goal answered: the fact its answer became.
    answer_item_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # How often it was stated (1 + near-duplicates folded in) and rewritten.
    mention_count: Mapped[int] = mapped_column(Integer, default=1)
    update_count: Mapped[int] = mapped_column(Integer, default=0)
    embedding_model: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    asked_at: Mapped[datetime | None] = mapped_column(nullable=True)
    answered_at: Mapped[datetime | None] = mapped_column(nullable=True)


class Summary(Base):
    """One summary of a room's raw characters (char_range_start, char_range_end].

    L1 summarizes messages, L(k+1) summarizes consecutive Lk summaries (its parents, in
    summary_parents). The unique (room, level, start) is what makes building resumable and
    safe to run twice: a segment is summarized once, whoever gets there first.
    """

    __tablename__ = "summaries"
    __table_args__ = (
        UniqueConstraint("room_id", "level", "char_range_start", name="uq_summaries_segment"),
        Index("ix_summaries_room_level_end", "room_id", "level", "char_range_end"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    level: Mapped[int] = mapped_column(Integer)
    char_range_start: Mapped[int] = mapped_column(BigCount)
    char_range_end: Mapped[int] = mapped_column(BigCount)
    # Messages covered (seq), for the recent-window check and for citing.
    first_seq: Mapped[int] = mapped_column(BigCount)
    last_seq: Mapped[int] = mapped_column(BigCount)
    conversation_summary: Mapped[str] = mapped_column(Text)
    actions_summary: Mapped[str] = mapped_column(Text)
    # len(conversation_summary) + len(actions_summary): what the next level's trigger counts.
    char_count: Mapped[int] = mapped_column(Integer)
    # Times of the first and last message covered: recency is the age of the conversation,
    # not of the summary row (a backlog summarized today is not fresh).
    period_start: Mapped[datetime] = mapped_column()
    period_end: Mapped[datetime] = mapped_column()
    # provider, model, purpose, input_chars, trimmed ...
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    embedding_model: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SummaryParent(Base):
    """An L(k+1) summary and the Lk summaries it was made from (the seed's parent_summaries)."""

    __tablename__ = "summary_parents"
    __table_args__ = (Index("ix_summary_parents_parent", "parent_id"),)

    summary_id: Mapped[str] = mapped_column(
        ForeignKey("summaries.id", ondelete="CASCADE"), primary_key=True
    )
    parent_id: Mapped[str] = mapped_column(
        ForeignKey("summaries.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer)


class Topic(Base):
    """A topic named by the model when summarizing. A merged topic keeps its row (history)
    with merged_into_id set; its names live on as aliases of the topic it merged into."""

    __tablename__ = "topics"
    __table_args__ = (UniqueConstraint("scope", "name_key", name="uq_topics_scope_name"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    scope: Mapped[str] = mapped_column(String(200))
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))
    merged_into_id: Mapped[str | None] = mapped_column(
        ForeignKey("topics.id", ondelete="SET NULL"), nullable=True
    )
    merge_confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    embedding_model: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    merged_at: Mapped[datetime | None] = mapped_column(nullable=True)


class TopicAlias(Base):
    """Another name of a topic (a merged topic's name). Names resolve through aliases."""

    __tablename__ = "topic_aliases"
    __table_args__ = (UniqueConstraint("scope", "alias_key", name="uq_topic_aliases_scope_alias"),)

    id: Mapped[int] = mapped_column(BigCount, primary_key=True, autoincrement=True)
    topic_id: Mapped[str] = mapped_column(ForeignKey("topics.id", ondelete="CASCADE"), index=True)
    scope: Mapped[str] = mapped_column(String(200))
    alias: Mapped[str] = mapped_column(String(200))
    alias_key: Mapped[str] = mapped_column(String(200))
    # The topic whose merge brought this name.
    merged_from_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SummaryTopic(Base):
    __tablename__ = "summary_topics"
    __table_args__ = (Index("ix_summary_topics_topic", "topic_id"),)

    summary_id: Mapped[str] = mapped_column(
        ForeignKey("summaries.id", ondelete="CASCADE"), primary_key=True
    )
    topic_id: Mapped[str] = mapped_column(
        ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True
    )


class TopicLink(Base):
    """A "related topics" link (a merge proposed with too little confidence to merge).
    Stored once per pair with topic_id < related_id."""

    __tablename__ = "topic_links"
    __table_args__ = (Index("ix_topic_links_related", "related_id"),)

    topic_id: Mapped[str] = mapped_column(
        ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True
    )
    related_id: Mapped[str] = mapped_column(
        ForeignKey("topics.id", ondelete="CASCADE"), primary_key=True
    )
    confidence: Mapped[float] = mapped_column(Float)
    # The summary whose making proposed the link.
    source_summary_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
