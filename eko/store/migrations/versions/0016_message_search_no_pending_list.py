"""message search (PostgreSQL): the words' index without a pending list

A GIN index keeps new entries in a pending list by default (`fastupdate`), merged into the
index by VACUUM or once the list passes `gin_pending_list_limit` (4 MB). Until then every
search reads the whole list: at 10,000 turns, with the turns of a bulk load still pending, a
question's full-text recall took 6-10 ms instead of 1.1 ms (206 pending pages; `eko bench
pipeline`). On a live server autovacuum merges it only after thousands of inserts, so the
search's cost grew and fell with it. A message's words are few: each insert now updates the
index itself, and the list left by earlier inserts is merged here.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return  # FTS5 has no pending list
    op.execute("ALTER INDEX message_fts_doc SET (fastupdate = off)")
    op.execute("SELECT gin_clean_pending_list('message_fts_doc')")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("ALTER INDEX message_fts_doc RESET (fastupdate)")
