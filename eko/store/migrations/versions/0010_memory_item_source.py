"""memory items by source message: the index that lets a recalled turn find its facts

`eko.memory.fact_links.facts_of_messages` looks up the items drawn from a few messages
(`source_message_id IN (...)`) on every context build; without this index that is a scan of
every memory item.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_memory_items_source", "memory_items", ["source_message_id"])


def downgrade() -> None:
    op.drop_index("ix_memory_items_source", table_name="memory_items")
