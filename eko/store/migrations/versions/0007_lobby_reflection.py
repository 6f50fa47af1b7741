"""lobby reflection: reflections, reflection_stats (counters + rate limits), activity_summaries

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def _room() -> sa.ForeignKey:
    return sa.ForeignKey("rooms.id", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "reflections",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("room_id", sa.String(32), _room(), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("skipped", sa.String(32), nullable=True),
        sa.Column("message", sa.Text(), nullable=True),
        sa.Column("message_id", sa.String(32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("tone", sa.String(16), nullable=True),
        sa.Column("goal_id", sa.String(32), nullable=True),
        sa.Column("duplicate_goal_ids", sa.JSON(), nullable=False),
        sa.Column("activity_summary", sa.Text(), nullable=True),
        sa.Column("goals_count", sa.Integer(), nullable=False),
        sa.Column("facts_count", sa.Integer(), nullable=False),
        sa.Column("llm_model", sa.String(200), nullable=True),
        sa.Column("llm_tokens", sa.Integer(), nullable=False),
        sa.Column("model_calls", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("rate_limited", sa.Boolean(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_reflections_room_created", "reflections", ["room_id", "created_at"])
    op.create_table(
        "reflection_stats",
        sa.Column("room_id", sa.String(32), _room(), primary_key=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("pass_count", sa.Integer(), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("rate_limited_count", sa.Integer(), nullable=False),
        sa.Column("total_tokens", BigId, nullable=False),
        sa.Column("model_calls", BigId, nullable=False),
        sa.Column("last_message_at", Timestamp, nullable=True),
        sa.Column("next_allowed_at", Timestamp, nullable=True),
        sa.Column("day", sa.String(10), nullable=True),
        sa.Column("day_count", sa.Integer(), nullable=False),
        sa.Column("cooldown_s", sa.Float(), nullable=False),
        sa.Column("claim_token", sa.String(32), nullable=True),
        sa.Column("claim_prev_next_at", Timestamp, nullable=True),
        sa.Column("claimed_at", Timestamp, nullable=True),
        sa.Column("pending_goal_id", sa.String(32), nullable=True),
        sa.Column("pending_message_id", sa.String(32), nullable=True),
        sa.Column("pending_since", Timestamp, nullable=True),
        sa.Column("updated_at", Timestamp, nullable=False),
    )
    op.create_table(
        "activity_summaries",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("room_id", sa.String(32), _room(), nullable=False),
        sa.Column("period_start", Timestamp, nullable=False),
        sa.Column("period_end", Timestamp, nullable=False),
        sa.Column("first_seq", BigId, nullable=False),
        sa.Column("last_seq", BigId, nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("participants", sa.JSON(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("llm_tokens", sa.Integer(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("room_id", "first_seq", name="uq_activity_summaries_start"),
    )
    op.create_index("ix_activity_summaries_room_end", "activity_summaries", ["room_id", "last_seq"])


def downgrade() -> None:
    op.drop_index("ix_activity_summaries_room_end", table_name="activity_summaries")
    op.drop_table("activity_summaries")
    op.drop_table("reflection_stats")
    op.drop_index("ix_reflections_room_created", table_name="reflections")
    op.drop_table("reflections")
