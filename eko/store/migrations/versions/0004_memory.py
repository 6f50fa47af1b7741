"""memory (facts/self/goals, summaries, topics)

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

BigCount = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "memory_items",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("subject_key", sa.String(200), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("status", sa.String(16), nullable=True),
        sa.Column("source_message_id", sa.String(32), nullable=True),
        sa.Column("source_room_id", sa.String(32), nullable=True),
        sa.Column("answer_item_id", sa.String(32), nullable=True),
        sa.Column("mention_count", sa.Integer(), nullable=False),
        sa.Column("update_count", sa.Integer(), nullable=False),
        sa.Column("embedding_model", sa.String(200), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.Column("asked_at", Timestamp, nullable=True),
        sa.Column("answered_at", Timestamp, nullable=True),
    )
    op.create_index("ix_memory_items_dedup", "memory_items", ["scope", "kind", "subject_key"])
    op.create_index("ix_memory_items_listing", "memory_items", ["scope", "kind", "updated_at"])

    op.create_table(
        "summaries",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "room_id",
            sa.String(32),
            sa.ForeignKey("rooms.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("char_range_start", BigCount, nullable=False),
        sa.Column("char_range_end", BigCount, nullable=False),
        sa.Column("first_seq", BigCount, nullable=False),
        sa.Column("last_seq", BigCount, nullable=False),
        sa.Column("conversation_summary", sa.Text(), nullable=False),
        sa.Column("actions_summary", sa.Text(), nullable=False),
        sa.Column("char_count", sa.Integer(), nullable=False),
        sa.Column("period_start", Timestamp, nullable=False),
        sa.Column("period_end", Timestamp, nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("embedding_model", sa.String(200), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("room_id", "level", "char_range_start", name="uq_summaries_segment"),
    )
    op.create_index(
        "ix_summaries_room_level_end", "summaries", ["room_id", "level", "char_range_end"]
    )

    op.create_table(
        "summary_parents",
        sa.Column(
            "summary_id",
            sa.String(32),
            sa.ForeignKey("summaries.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "parent_id",
            sa.String(32),
            sa.ForeignKey("summaries.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("position", sa.Integer(), nullable=False),
    )
    op.create_index("ix_summary_parents_parent", "summary_parents", ["parent_id"])

    op.create_table(
        "topics",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("name_key", sa.String(200), nullable=False),
        sa.Column(
            "merged_into_id",
            sa.String(32),
            sa.ForeignKey("topics.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("merge_confidence", sa.Float(), nullable=True),
        sa.Column("embedding_model", sa.String(200), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("merged_at", Timestamp, nullable=True),
        sa.UniqueConstraint("scope", "name_key", name="uq_topics_scope_name"),
    )

    op.create_table(
        "topic_aliases",
        sa.Column("id", BigCount, primary_key=True, autoincrement=True),
        sa.Column(
            "topic_id",
            sa.String(32),
            sa.ForeignKey("topics.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("alias", sa.String(200), nullable=False),
        sa.Column("alias_key", sa.String(200), nullable=False),
        sa.Column("merged_from_id", sa.String(32), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("scope", "alias_key", name="uq_topic_aliases_scope_alias"),
    )
    op.create_index("ix_topic_aliases_topic_id", "topic_aliases", ["topic_id"])

    op.create_table(
        "summary_topics",
        sa.Column(
            "summary_id",
            sa.String(32),
            sa.ForeignKey("summaries.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "topic_id",
            sa.String(32),
            sa.ForeignKey("topics.id", ondelete="CASCADE"),
            primary_key=True,
        ),
    )
    op.create_index("ix_summary_topics_topic", "summary_topics", ["topic_id"])

    op.create_table(
        "topic_links",
        sa.Column(
            "topic_id",
            sa.String(32),
            sa.ForeignKey("topics.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "related_id",
            sa.String(32),
            sa.ForeignKey("topics.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("source_summary_id", sa.String(32), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_topic_links_related", "topic_links", ["related_id"])


def downgrade() -> None:
    # Vectors of collections "memory", "summary" and "topic" stay in `embeddings` (see 0002:
    # deleting them here would bypass the vector backends' side indexes); they match nothing.
    for table in (
        "topic_links",
        "summary_topics",
        "topic_aliases",
        "topics",
        "summary_parents",
        "summaries",
        "memory_items",
    ):
        op.drop_table(table)
