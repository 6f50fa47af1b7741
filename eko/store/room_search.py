"""Full-text search over every room a user is a member of (the search box of the page).

The same index as eko.store.message_search (SQLite FTS5 `message_fts`; PostgreSQL's stored
'simple' vectors in `message_fts`), but across the user's rooms, and every significant word
required (a search box narrows as one types; the per-room recall ORs a question's words).
Ranked by the backend's own score: bm25() on SQLite, ts_rank on PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.message_search import query_words


@dataclass(frozen=True, slots=True)
class UserMessageHit:
    message_id: str
    room_id: str
    seq: int
    role: str
    content: str


async def search_user_messages(
    session: AsyncSession, *, dialect: str, user_id: int, query: str, limit: int
) -> list[UserMessageHit]:
    """Messages holding every significant word of `query` (each as a prefix) in the rooms
    `user_id` is a member of, best first; [] when the query has no significant word."""
    words = query_words(query)
    if not words or limit <= 0:
        return []
    if dialect == "sqlite":
        statement = (
            "SELECT m.id, m.room_id, m.seq, m.role, m.content FROM message_fts "
            "JOIN messages AS m ON m.rowid = message_fts.rowid "
            "JOIN room_members AS rm ON rm.room_id = m.room_id AND rm.user_id = :user "
            "WHERE message_fts MATCH :match AND m.role IN ('user', 'assistant') "
            "ORDER BY bm25(message_fts), m.seq DESC LIMIT :limit"
        )
        match = "content:(" + " AND ".join(f'"{word}"*' for word in words) + ")"
    else:
        statement = (
            "SELECT m.id, m.room_id, m.seq, m.role, m.content FROM message_fts AS f "
            "JOIN messages AS m ON m.id = f.message_id "
            "JOIN room_members AS rm ON rm.room_id = f.room_id AND rm.user_id = :user "
            "WHERE f.doc @@ to_tsquery('simple', :match) AND m.role IN ('user', 'assistant') "
            "ORDER BY ts_rank(f.doc, to_tsquery('simple', :match)) DESC, m.seq DESC "
            "LIMIT :limit"
        )
        # Words are \w+ runs: none of tsquery's operators can be in them.
        match = " & ".join(f"{word}:*" for word in words)
    rows = await session.execute(text(statement), {"match": match, "user": user_id, "limit": limit})
    return [UserMessageHit(r[0], r[1], int(r[2]), r[3], r[4]) for r in rows]
