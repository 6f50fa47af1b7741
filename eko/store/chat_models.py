"""Chat engine tables: structured user facts, agents (subscriptions), connected services, docs.

- user_facts: what the assistant knows about a user, one row per (user, fact_key), in the seed's
  shape (category, scope, value_type, JSON value, confidence, is_estimated, source_ref, notes).
- user_agents: the agents a user subscribed to (personal_assistant, ultimate, medical_assistant…).
- user_services: the tools a user connected (calendar, email…). Capabilities are computed from
  both (an agent whose required service is not connected grants nothing): eko/chat/engine/
  capabilities.py.
- doc_scopes / doc_chunks: product documentation, chunked; the chunk vectors live in the shared
  `embeddings` table (collection "doc_chunk", key = the scope name). A scope with a room_id is
  that room's own (its attachments): only that room's turns and members ever read it.
- room_attachments: the files attached to a room (one row per file name; its text is the
  room's scope's chunks of that source).

Per-user chat state that is not a fact (intro turns, discovery gates, locale, timezone) lives in
users.settings JSON (see eko/chat/engine/profile.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, new_id, utcnow


class UserFact(Base):
    __tablename__ = "user_facts"
    __table_args__ = (UniqueConstraint("user_id", "fact_key", name="uq_user_facts_user_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    fact_key: Mapped[str] = mapped_column(String(100))
    category: Mapped[str] = mapped_column(String(50), default="profile")
    scope: Mapped[str] = mapped_column(String(50), default="global")
    # string | boolean | number | json: how `value` is meant to be read.
    value_type: Mapped[str] = mapped_column(String(20), default="string")
    value: Mapped[Any] = mapped_column(JSON)
    confidence: Mapped[float] = mapped_column(Float, default=1.0)
    is_estimated: Mapped[bool] = mapped_column(Boolean, default=False)
    # Where the value came from, e.g. "message:<id>" or "api".
    source_ref: Mapped[str | None] = mapped_column(String(200), nullable=True)
    notes: Mapped[str | None] = mapped_column(Text, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class UserAgent(Base):
    __tablename__ = "user_agents"
    __table_args__ = (UniqueConstraint("user_id", "agent_type", name="uq_user_agents_user_type"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    agent_type: Mapped[str] = mapped_column(String(64))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class UserService(Base):
    __tablename__ = "user_services"
    __table_args__ = (UniqueConstraint("user_id", "service", name="uq_user_services_user_service"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    service: Mapped[str] = mapped_column(String(64))
    connected: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class DocScope(Base):
    __tablename__ = "doc_scopes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set for a room's own scope (its attachments, migration 0015); NULL for a shared scope.
    room_id: Mapped[str | None] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), nullable=True, default=None
    )


class DocChunk(Base):
    __tablename__ = "doc_chunks"
    __table_args__ = (
        UniqueConstraint("scope_id", "source", "position", name="uq_doc_chunks_position"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    scope_id: Mapped[str] = mapped_column(ForeignKey("doc_scopes.id", ondelete="CASCADE"))
    # The document this chunk comes from (a file name or a name given at ingest).
    source: Mapped[str] = mapped_column(String(300))
    position: Mapped[int] = mapped_column(Integer)
    # The heading path of the chunk ("Guide > Install"), empty for plain text.
    title: Mapped[str] = mapped_column(String(300), default="")
    content: Mapped[str] = mapped_column(Text)
    char_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RoomAttachment(Base):
    """A file attached to a room: its text lives in the room's docs scope as the chunks of the
    source `filename` (re-attaching a file of the same name replaces it)."""

    __tablename__ = "room_attachments"
    __table_args__ = (
        UniqueConstraint("room_id", "filename", name="uq_room_attachments_room_filename"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    filename: Mapped[str] = mapped_column(String(300))
    content_type: Mapped[str] = mapped_column(String(100))
    size_bytes: Mapped[int] = mapped_column(Integer)
    # Characters of extracted text, and how many chunks they made.
    chars: Mapped[int] = mapped_column(Integer)
    chunks: Mapped[int] = mapped_column(Integer)
    uploaded_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
