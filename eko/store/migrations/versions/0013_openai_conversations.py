"""openai_conversations and rooms.instructions: OpenAI clients' conversations

`openai_conversations` holds each room's conversation so far as a fingerprint of its turns (one
key, one persona), so that a stateless client's next request finds the same room
(eko/store/conversation_models.py). `rooms.instructions` holds the caller's instructions for a
conversation (an OpenAI client's system message), which the writer layers under the persona.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column("rooms", sa.Column("instructions", sa.Text(), nullable=True))
    op.create_table(
        "openai_conversations",
        sa.Column(
            "room_id",
            sa.String(32),
            sa.ForeignKey("rooms.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("user_id", BigId, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("persona", sa.String(100), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("last_request", sa.String(64), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_openai_conversations_head",
        "openai_conversations",
        ["user_id", "persona", "fingerprint"],
    )
    op.create_index(
        "ix_openai_conversations_last_request",
        "openai_conversations",
        ["user_id", "persona", "last_request"],
    )


def downgrade() -> None:
    op.drop_index("ix_openai_conversations_last_request", table_name="openai_conversations")
    op.drop_index("ix_openai_conversations_head", table_name="openai_conversations")
    op.drop_table("openai_conversations")
    with op.batch_alter_table("rooms") as batch:
        batch.drop_column("instructions")
