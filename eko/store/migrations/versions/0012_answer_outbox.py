"""answer_outbox: the user messages the assistant still owes an answer

Written in the user message's transaction, deleted in the reply's (eko/store/outbox_models.py):
after a crash, the recovery loop finds every acknowledged message left unanswered. Messages
stored before this revision are not added: nothing promised them an answer across a restart.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "answer_outbox",
        sa.Column(
            "user_message_id",
            sa.String(32),
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("room_id", sa.String(32), nullable=False),
        sa.Column("claimed_by", sa.String(100), nullable=True),
        sa.Column("claimed_until", Timestamp, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_index("ix_answer_outbox_claimed_until", "answer_outbox", ["claimed_until"])


def downgrade() -> None:
    op.drop_index("ix_answer_outbox_claimed_until", table_name="answer_outbox")
    op.drop_table("answer_outbox")
