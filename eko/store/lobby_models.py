"""The lobby's proactive side (seed reactive-eko): reflections, their stats and rate-limit state
per lobby, and activity summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, new_id, utcnow

REFLECTION_ACTIONS = ("pass", "message")
REFLECTION_TRIGGERS = ("scheduled", "manual", "opportunity")
TONES = ("playful", "helpful", "technical")


class Reflection(Base):
    """One reflection of the assistant in a lobby: what it considered, what it decided."""

    __tablename__ = "reflections"
    __table_args__ = (Index("ix_reflections_room_created", "room_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    trigger: Mapped[str] = mapped_column(String(16))  # scheduled | manual | opportunity
    forced: Mapped[bool] = mapped_column(Boolean, default=False)
    action: Mapped[str] = mapped_column(String(16))  # pass | message
    # Why no model was asked: last_message_is_assistant | rate_limited | no_goal | no_activity
    skipped: Mapped[str | None] = mapped_column(String(32), nullable=True)
    message: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The lobby message it posted.
    message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    tone: Mapped[str | None] = mapped_column(String(16), nullable=True)
    goal_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    duplicate_goal_ids: Mapped[list[str]] = mapped_column(JSON, default=list)
    activity_summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    goals_count: Mapped[int] = mapped_column(Integer, default=0)
    facts_count: Mapped[int] = mapped_column(Integer, default=0)
    llm_model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    llm_tokens: Mapped[int] = mapped_column(Integer, default=0)
    model_calls: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    rate_limited: Mapped[bool] = mapped_column(Boolean, default=False)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReflectionStats(Base):
    """Counters and rate-limit state of one lobby. The rate limits are conditional UPDATEs of
    this row (eko/lobby/store.py), so no number of workers or triggers can exceed them."""

    __tablename__ = "reflection_stats"

    room_id: Mapped[str] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    total: Mapped[int] = mapped_column(Integer, default=0)
    pass_count: Mapped[int] = mapped_column(Integer, default=0)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    rate_limited_count: Mapped[int] = mapped_column(Integer, default=0)
    total_tokens: Mapped[int] = mapped_column(BigId, default=0)
    model_calls: Mapped[int] = mapped_column(BigId, default=0)
    last_message_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # No intervention before this time (last one + the adaptive cooldown).
    next_allowed_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # Interventions on `day` (UTC, YYYY-MM-DD).
    day: Mapped[str | None] = mapped_column(String(10), nullable=True)
    day_count: Mapped[int] = mapped_column(Integer, default=0)
    # The adaptive cooldown now in force (seconds).
    cooldown_s: Mapped[float] = mapped_column(Float, default=0.0)
    # A claimed intervention slot not yet used (released if the model passes or fails).
    claim_token: Mapped[str | None] = mapped_column(String(32), nullable=True)
    claim_prev_next_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # When the slot was claimed: a claim older than CLAIM_STALE_S (a crashed worker) is void.
    claimed_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # The last question asked and not yet answered (adaptive cooldown, learning).
    pending_goal_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    pending_message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    pending_since: Mapped[datetime | None] = mapped_column(nullable=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ActivitySummary(Base):
    """What a lobby talked about between two summaries (messages first_seq..last_seq)."""

    __tablename__ = "activity_summaries"
    __table_args__ = (
        UniqueConstraint("room_id", "first_seq", name="uq_activity_summaries_start"),
        Index("ix_activity_summaries_room_end", "room_id", "last_seq"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    period_start: Mapped[datetime] = mapped_column()
    period_end: Mapped[datetime] = mapped_column()
    first_seq: Mapped[int] = mapped_column(BigId)
    last_seq: Mapped[int] = mapped_column(BigId)
    message_count: Mapped[int] = mapped_column(Integer)
    participants: Mapped[list[str]] = mapped_column(JSON, default=list)
    summary: Mapped[str] = mapped_column(Text)
    llm_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
