"""memory guard (semantic response cache)

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # filled in by the feature that owns this revision


def downgrade() -> None:
    pass
