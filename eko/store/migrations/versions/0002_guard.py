"""memory guard (semantic response cache)

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "guard_entries",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("usage_count", sa.Integer(), nullable=False),
        sa.Column("source_message_id", sa.String(32), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("last_used_at", Timestamp, nullable=True),
        sa.Column("obsoleted_at", Timestamp, nullable=True),
        sa.UniqueConstraint("source_message_id", name="uq_guard_entries_source_message"),
    )
    op.create_index("ix_guard_entries_scope_key_hash", "guard_entries", ["scope", "key_hash"])
    op.create_index("ix_guard_entries_created_at", "guard_entries", ["created_at"])


def downgrade() -> None:
    # The entries' vectors (collection "guard" of `embeddings`) are left in place: deleting
    # them here would bypass the vector backends' side indexes. Without entries they match
    # nothing; `eko cache prune` after a re-upgrade does not need them.
    op.drop_table("guard_entries")
