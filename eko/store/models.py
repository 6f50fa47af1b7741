"""SQLAlchemy models: the database is Eko's source of truth.

The same models serve SQLite and PostgreSQL. Ids exposed by the API are UUID strings;
integer ids stay internal (users) or serve as vector row ids (embeddings).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from eko.store.types import UTCDateTime, VectorColumn

# BIGINT on PostgreSQL, but INTEGER on SQLite so that it stays the rowid alias (autoincrement).
BigId = BigInteger().with_variant(Integer(), "sqlite")


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        # Every timestamp column: aware UTC datetimes on SQLite as on PostgreSQL.
        datetime: UTCDateTime(),
    }


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True, default=new_id)
    display_name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16), default="member")  # member | staff
    # Not a key any more (migration 0014 moved keys to api_keys): a per-user random secret that
    # signs the browser's event tokens (eko.events.tokens); revoking a key renews it.
    api_key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # Signing in with a password (migration 0014): the name typed at sign-in (case-folded,
    # unique) and the argon2id hash; both None for a user who only has API keys.
    login_name: Mapped[str | None] = mapped_column(String(100), unique=True, nullable=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    is_pro: Mapped[bool] = mapped_column(Boolean, default=False)
    free_quota_used: Mapped[int] = mapped_column(Integer, default=0)
    free_quota_limit: Mapped[int] = mapped_column(Integer, default=8)
    # locale, timezone, use_tu_form, ...
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Room(Base):
    __tablename__ = "rooms"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(16))  # direct | lobby
    name: Mapped[str] = mapped_column(String(200))
    persona: Mapped[str] = mapped_column(String(100))
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The caller's instructions for this conversation (an OpenAI client's system message),
    # layered under the persona and the rules by the writer (migration 0013).
    instructions: Mapped[str | None] = mapped_column(Text, nullable=True, default=None)


class RoomMember(Base):
    __tablename__ = "room_members"

    room_id: Mapped[str] = mapped_column(
        ForeignKey("rooms.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)


class Message(Base):
    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("room_id", "seq", name="uq_messages_room_seq"),
        # A period a question names -> its turns (eko.memory.date_recall, migration 0011).
        Index("ix_messages_room_created", "room_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    room_id: Mapped[str] = mapped_column(ForeignKey("rooms.id", ondelete="CASCADE"))
    # Order within the room: a per-room counter assigned at insert (created_at can tie).
    seq: Mapped[int] = mapped_column(BigId)
    sender_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    role: Mapped[str] = mapped_column(String(16))  # user | assistant | system
    # message | cached_response | paywall | fallback ...
    type: Mapped[str] = mapped_column(String(32), default="message")
    content: Mapped[str] = mapped_column(Text)
    reasoning: Mapped[str | None] = mapped_column(Text, nullable=True)
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    char_count: Mapped[int] = mapped_column(Integer)
    # The room's raw character count up to and including this message (summaries cite ranges).
    char_end: Mapped[int] = mapped_column(BigId)
    # Idempotency: one stored row per key ("user:<room>:<client id>", "reply:<user msg id>").
    dedupe_key: Mapped[str] = mapped_column(String(200), unique=True)
    reply_to_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class LLMCall(Base):
    __tablename__ = "llm_calls"
    __table_args__ = (Index("ix_llm_calls_message", "message_id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    purpose: Mapped[str] = mapped_column(String(64), index=True)
    provider: Mapped[str] = mapped_column(String(100))
    model: Mapped[str] = mapped_column(String(200))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float] = mapped_column(Float)
    outcome: Mapped[str] = mapped_column(String(16))  # ok | fallback | invalid | error
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    room_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    message_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    prompt: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class Embedding(Base):
    """Every vector Eko stores, whatever it embeds; the owning row is (collection, item_id).

    The model name and dimension are stored with each vector so that vector spaces never mix;
    the text is kept so a model change can re-embed. On SQLite a sqlite-vec table indexes these
    rows (rowid = id); on PostgreSQL an HNSW index per dimension does.
    """

    __tablename__ = "embeddings"
    __table_args__ = (
        UniqueConstraint("collection", "item_id", name="uq_embeddings_item"),
        Index("ix_embeddings_lookup", "collection", "model", "key"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    collection: Mapped[str] = mapped_column(String(64))
    item_id: Mapped[str] = mapped_column(String(64))
    # Visibility key (scope) the search filters on, e.g. "global", "user:<id>", "room:<id>".
    key: Mapped[str] = mapped_column(String(200))
    model: Mapped[str] = mapped_column(String(200))
    dim: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    # A 1-D float32 numpy array on both backends (see VectorColumn).
    vector: Mapped[Any] = mapped_column(VectorColumn())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
