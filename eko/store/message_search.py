"""Full-text search over a room's messages (migrations 0008 and 0009 keep the index up to date).

SQLite: FTS5 (`message_fts`, rowid = the message's rowid), ranked by bm25. PostgreSQL:
a 'simple' text search vector of the accent-folded content, stored per message in
`message_fts` behind a GIN index (migration 0009), ranked by ts_rank_cd. The query is the
message's significant words, each as a prefix (no stemming in either: "research" finds
"researched"), joined by OR: a question finds the turns that share any of its rarer words,
best first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

# Objects of the index that the models do not describe (migrations must not drop them).
_SEARCH_OBJECTS = ("message_fts", "ix_messages_fts")
_WORD = re.compile(r"\w+", re.UNICODE)
# Words too common to say what a question is about (English and French).
STOPWORDS = frozenset(
    word
    for line in (Path(__file__).with_name("stopwords.txt")).read_text("utf-8").splitlines()
    if not line.startswith("#")
    for word in line.split()
)
MAX_QUERY_WORDS = 24
# PostgreSQL's indexed document (migrations 0008 and 0009 build the index on this expression):
# accents folded by translate(), which is immutable (the unaccent extension may be missing).
PG_DOCUMENT = (
    "to_tsvector('simple', translate(content, "
    "'àáâãäåçèéêëìíîïñòóôõöùúûüýÿœæÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝ', "
    "'aaaaaaceeeeiiiinooooouuuuyyoaAAAAAACEEEEIIIINOOOOOUUUUY'))"
)


@dataclass(frozen=True, slots=True)
class MessageHit:
    message_id: str
    seq: int
    rank: float  # higher is better, whatever the backend


def is_search_object(name: str | None) -> bool:
    return name is not None and name.startswith(_SEARCH_OBJECTS)


def query_words(query: str, ignore: Collection[str] = ()) -> list[str]:
    """The query's significant words, lowercased and accent-folded, in order, deduplicated;
    `ignore`: words (as this returns them) to leave out."""
    decomposed = unicodedata.normalize("NFKD", query.lower())
    lowered = "".join(c for c in decomposed if not unicodedata.combining(c))
    words = [
        w for w in _WORD.findall(lowered) if len(w) > 2 and w not in STOPWORDS and w not in ignore
    ]
    return list(dict.fromkeys(words))[:MAX_QUERY_WORDS]


async def search_messages(
    session: AsyncSession,
    *,
    dialect: str,
    room_id: str,
    query: str,
    limit: int,
    before_seq: int | None = None,
    ignore: Collection[str] = (),
    from_seq: int | None = None,
) -> list[MessageHit]:
    """The room's messages that share words with `query` (from `from_seq`, before
    `before_seq`), best first. `dialect`: the database's ("sqlite" or "postgresql");
    `ignore`: query words not to search for (see query_words)."""
    words = query_words(query, ignore)
    if not words or limit <= 0:
        return []
    bound = before_seq if before_seq is not None else 2**62
    # Only when asked: an open lower bound would let the planner prefer the (room, seq) range.
    after = "" if from_seq is None else " AND {seq} >= :start"
    if dialect == "sqlite":
        # Each word quoted (FTS5 syntax characters taken literally), and as a prefix: without
        # stemming, "research" must still find "researched".
        match = " OR ".join(f'"{word}"*' for word in words)
        rows = await session.execute(
            text(
                "SELECT m.id, m.seq, bm25(message_fts) AS score FROM message_fts "
                "JOIN messages AS m ON m.rowid = message_fts.rowid "
                "WHERE message_fts MATCH :match AND m.room_id = :room AND m.seq < :bound"
                + after.format(seq="m.seq")
                + " "
                "ORDER BY score LIMIT :limit"
            ),
            {
                "match": f'room_id:"{room_id}" AND content:({match})',
                "room": room_id,
                "start": from_seq,
                "bound": bound,
                "limit": limit,
            },
        )
        # bm25() is lower for better matches.
        return [MessageHit(row[0], row[1], -float(row[2])) for row in rows]
    tsquery = " | ".join(f"{word}:*" for word in words)
    # The vectors stored by migration 0009 (message_fts, kept by triggers): ranking the matches
    # reads them instead of recomputing each from its text.
    rows = await session.execute(
        text(
            "SELECT f.message_id, f.seq, ts_rank_cd(f.doc, q) AS score "
            "FROM message_fts AS f, to_tsquery('simple', :tsquery) AS q "
            "WHERE f.room_id = :room AND f.seq < :bound AND f.doc @@ q"
            + after.format(seq="f.seq")
            + " "
            "ORDER BY score DESC, f.seq DESC LIMIT :limit"
        ),
        {"tsquery": tsquery, "room": room_id, "start": from_seq, "bound": bound, "limit": limit},
    )
    return [MessageHit(row[0], row[1], float(row[2])) for row in rows]
