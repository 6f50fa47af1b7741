"""chat engine (user facts, agents, services, docs chunks)

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # filled in by the feature that owns this revision


def downgrade() -> None:
    pass
