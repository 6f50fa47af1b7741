"""message search: a full-text index over every message, kept up to date by the database

SQLite: an FTS5 table whose rowid is the message's rowid, filled by triggers on insert,
update and delete (accents folded, so "Besançon" matches "besancon"). PostgreSQL: a GIN
index on the messages' text search vector, accents folded ('simple' configuration: no
stemming, any language). Existing messages are indexed here.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_SQLITE_UP = (
    "CREATE VIRTUAL TABLE message_fts USING fts5("
    "content, room_id, tokenize='unicode61 remove_diacritics 2')",
    "CREATE TRIGGER message_fts_insert AFTER INSERT ON messages BEGIN "
    "INSERT INTO message_fts(rowid, content, room_id) VALUES (new.rowid, new.content, "
    "new.room_id); END",
    "CREATE TRIGGER message_fts_delete AFTER DELETE ON messages BEGIN "
    "DELETE FROM message_fts WHERE rowid = old.rowid; END",
    "CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON messages BEGIN "
    "DELETE FROM message_fts WHERE rowid = old.rowid; "
    "INSERT INTO message_fts(rowid, content, room_id) VALUES (new.rowid, new.content, "
    "new.room_id); END",
    "INSERT INTO message_fts(rowid, content, room_id) SELECT rowid, content, room_id FROM messages",
)
_SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS message_fts_update",
    "DROP TRIGGER IF EXISTS message_fts_delete",
    "DROP TRIGGER IF EXISTS message_fts_insert",
    "DROP TABLE IF EXISTS message_fts",
)
# The same expression as eko.store.message_search.PG_DOCUMENT at the time of this migration.
_PG_UP = (
    "CREATE INDEX IF NOT EXISTS ix_messages_fts ON messages USING gin (to_tsvector('simple', "
    "translate(content, 'àáâãäåçèéêëìíîïñòóôõöùúûüýÿœæÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝ', "
    "'aaaaaaceeeeiiiinooooouuuuyyoaAAAAAACEEEEIIIINOOOOOUUUUY')))",
)
_PG_DOWN = ("DROP INDEX IF EXISTS ix_messages_fts",)


def upgrade() -> None:
    statements = _SQLITE_UP if op.get_bind().dialect.name == "sqlite" else _PG_UP
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    statements = _SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else _PG_DOWN
    for statement in statements:
        op.execute(statement)
