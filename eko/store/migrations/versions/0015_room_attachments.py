"""room_attachments and doc_scopes.room_id: files attached to a conversation

A file attached to a room (text, Markdown, PDF) becomes a document of that room's own docs scope
(`doc_scopes.room_id` set; shared scopes keep it NULL), searched by the chat engine's docs node
on the room's turns only. `room_attachments` lists the room's files, one row per file name
(eko/store/chat_models.py).

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("doc_scopes") as batch:
        batch.add_column(sa.Column("room_id", sa.String(32), nullable=True))
        batch.create_foreign_key(
            "fk_doc_scopes_room_id", "rooms", ["room_id"], ["id"], ondelete="CASCADE"
        )
    op.create_table(
        "room_attachments",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "room_id", sa.String(32), sa.ForeignKey("rooms.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("content_type", sa.String(100), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column(
            "uploaded_by", BigId, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("room_id", "filename", name="uq_room_attachments_room_filename"),
    )


def downgrade() -> None:
    op.drop_table("room_attachments")
    with op.batch_alter_table("doc_scopes") as batch:
        batch.drop_constraint("fk_doc_scopes_room_id", type_="foreignkey")
        batch.drop_column("room_id")
