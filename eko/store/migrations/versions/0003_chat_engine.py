"""chat engine (user facts, agents, services, docs chunks)

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Timestamp = sa.DateTime(timezone=True)


def _user_fk() -> sa.Column[int]:
    return sa.Column(
        "user_id", BigId, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
    )


def upgrade() -> None:
    op.create_table(
        "user_facts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("fact_key", sa.String(100), nullable=False),
        sa.Column("category", sa.String(50), nullable=False),
        sa.Column("scope", sa.String(50), nullable=False),
        sa.Column("value_type", sa.String(20), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("is_estimated", sa.Boolean(), nullable=False),
        sa.Column("source_ref", sa.String(200), nullable=True),
        sa.Column("notes", sa.Text(), nullable=True),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.UniqueConstraint("user_id", "fact_key", name="uq_user_facts_user_key"),
    )
    op.create_table(
        "user_agents",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("agent_type", sa.String(64), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.UniqueConstraint("user_id", "agent_type", name="uq_user_agents_user_type"),
    )
    op.create_table(
        "user_services",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        _user_fk(),
        sa.Column("service", sa.String(64), nullable=False),
        sa.Column("connected", sa.Boolean(), nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.UniqueConstraint("user_id", "service", name="uq_user_services_user_service"),
    )
    op.create_table(
        "doc_scopes",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
    )
    op.create_table(
        "doc_chunks",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "scope_id",
            sa.String(32),
            sa.ForeignKey("doc_scopes.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("source", sa.String(300), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("char_count", sa.Integer(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.UniqueConstraint("scope_id", "source", "position", name="uq_doc_chunks_position"),
    )


def downgrade() -> None:
    # The chunks' vectors (embeddings, collection "doc_chunk") are left to `eko docs` tools:
    # removing them here would bypass the vector index's own bookkeeping (sqlite-vec tables).
    for table in ("doc_chunks", "doc_scopes", "user_services", "user_agents", "user_facts"):
        op.drop_table(table)
