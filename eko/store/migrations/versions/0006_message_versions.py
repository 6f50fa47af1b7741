"""message_versions: earlier versions of a regenerated assistant reply

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "message_versions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column(
            "message_id",
            sa.String(32),
            sa.ForeignKey("messages.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("written_at", Timestamp, nullable=False),
        sa.Column("replaced_at", Timestamp, nullable=False),
        sa.UniqueConstraint("message_id", "version", name="uq_message_versions"),
    )


def downgrade() -> None:
    op.drop_table("message_versions")
