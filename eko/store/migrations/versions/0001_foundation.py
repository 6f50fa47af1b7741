"""foundation: users, rooms, members, messages, llm_calls, embeddings

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from eko.store.types import VectorColumn

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    op.create_table(
        "users",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("public_id", sa.String(32), nullable=False, unique=True),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("api_key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("is_pro", sa.Boolean(), nullable=False),
        sa.Column("free_quota_used", sa.Integer(), nullable=False),
        sa.Column("free_quota_limit", sa.Integer(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_table(
        "rooms",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("persona", sa.String(100), nullable=False),
        sa.Column(
            "created_by", BigId, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_table(
        "room_members",
        sa.Column(
            "room_id",
            sa.String(32),
            sa.ForeignKey("rooms.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "user_id", BigId, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("joined_at", Timestamp, nullable=False),
    )
    op.create_index("ix_room_members_user_id", "room_members", ["user_id"])
    op.create_table(
        "messages",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "room_id",
            sa.String(32),
            sa.ForeignKey("rooms.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", BigId, nullable=False),
        sa.Column(
            "sender_id", BigId, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("tool_calls", sa.JSON(), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("char_count", sa.Integer(), nullable=False),
        sa.Column("char_end", BigId, nullable=False),
        sa.Column("dedupe_key", sa.String(200), nullable=False, unique=True),
        sa.Column("reply_to_id", sa.String(32), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("room_id", "seq", name="uq_messages_room_seq"),
    )
    op.create_table(
        "llm_calls",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("purpose", sa.String(64), nullable=False),
        sa.Column("provider", sa.String(100), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("room_id", sa.String(32), nullable=True),
        sa.Column("message_id", sa.String(32), nullable=True),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_llm_calls_purpose", "llm_calls", ["purpose"])
    op.create_index("ix_llm_calls_room_id", "llm_calls", ["room_id"])
    op.create_index("ix_llm_calls_created_at", "llm_calls", ["created_at"])
    op.create_index("ix_llm_calls_message", "llm_calls", ["message_id"])
    op.create_table(
        "embeddings",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("collection", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("vector", VectorColumn(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("collection", "item_id", name="uq_embeddings_item"),
    )
    op.create_index("ix_embeddings_lookup", "embeddings", ["collection", "model", "key"])


def downgrade() -> None:
    for table in ("embeddings", "llm_calls", "messages", "room_members", "rooms", "users"):
        op.drop_table(table)
