"""message search (PostgreSQL): the text search vector stored, not recomputed per match

0008 indexed an expression: the GIN index finds the matches, but ranking them (ts_rank_cd)
recomputes each match's vector from its text — ~65 µs a match, 60 ms for the ~1,000 turns a
question's words match in a 10,000-turn room, and a whole-room scan when PostgreSQL picks a
generic plan. Here each message's vector is stored once, at insert (and on edit), in
`message_fts` (the name SQLite's FTS5 table has), with the room and seq to filter on; the
expression index goes. SQLite is unchanged (FTS5 already stores its index).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# The same expression as eko.store.message_search.PG_DOCUMENT (and 0008's index), of `text`.
_DOCUMENT = (
    "to_tsvector('simple', translate({text}, "
    "'àáâãäåçèéêëìíîïñòóôõöùúûüýÿœæÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝ', "
    "'aaaaaaceeeeiiiinooooouuuuyyoaAAAAAACEEEEIIIINOOOOOUUUUY'))"
)
_PG_UP = (
    "CREATE TABLE message_fts ("
    "message_id varchar(32) PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE, "
    "room_id varchar(32) NOT NULL, seq bigint NOT NULL, doc tsvector NOT NULL)",
    "CREATE INDEX message_fts_doc ON message_fts USING gin (doc)",
    "CREATE INDEX message_fts_room_seq ON message_fts (room_id, seq)",
    "CREATE FUNCTION message_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "INSERT INTO message_fts (message_id, room_id, seq, doc) VALUES "
    f"(NEW.id, NEW.room_id, NEW.seq, {_DOCUMENT.format(text='NEW.content')}) "
    "ON CONFLICT (message_id) DO UPDATE SET doc = EXCLUDED.doc; RETURN NULL; END $$",
    "CREATE TRIGGER message_fts_insert AFTER INSERT ON messages "
    "FOR EACH ROW EXECUTE FUNCTION message_fts_sync()",
    "CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON messages "
    "FOR EACH ROW EXECUTE FUNCTION message_fts_sync()",
    "INSERT INTO message_fts (message_id, room_id, seq, doc) "
    f"SELECT id, room_id, seq, {_DOCUMENT.format(text='content')} FROM messages",
    "DROP INDEX IF EXISTS ix_messages_fts",
)
_PG_DOWN = (
    f"CREATE INDEX IF NOT EXISTS ix_messages_fts ON messages USING gin "
    f"({_DOCUMENT.format(text='content')})",
    "DROP TRIGGER IF EXISTS message_fts_update ON messages",
    "DROP TRIGGER IF EXISTS message_fts_insert ON messages",
    "DROP FUNCTION IF EXISTS message_fts_sync()",
    "DROP TABLE IF EXISTS message_fts",
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for statement in _PG_UP:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for statement in _PG_DOWN:
        op.execute(statement)
