"""messages by time within a room: the index that turns a date a question names into turns

`eko.memory.date_recall` finds the first and the last message of a room within a period
("what did we say on 3 June?"): two index seeks on (room_id, created_at), not a scan of the
room.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_messages_room_created", "messages", ["room_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_messages_room_created", table_name="messages")
