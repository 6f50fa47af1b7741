"""Full-text search over a room's messages (migrations 0008 and 0009 keep the index up to date).

SQLite: FTS5 (`message_fts`, rowid = the message's rowid), ranked by bm25. PostgreSQL:
a 'simple' text search vector of the accent-folded content, stored per message in
`message_fts` behind a GIN index (migration 0009), ranked by BM25 computed in SQL (the
room's document frequencies), like FTS5's. The query is the
message's significant words, each as a prefix (no stemming in either: "research" finds
"researched"), joined by OR: a question finds the turns that share any of its rarer words,
best first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from eko.text import strip_accents

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
# BM25's usual constants, as SQLite FTS5's bm25() uses them.
BM25_K1 = 1.2
BM25_B = 0.75
# PostgreSQL: a word in more than this share of a room's messages (at least COMMON_MIN) is
# common; turns are ranked when they hold a rarer word (see _search_postgres).
COMMON_SHARE = 0.05
COMMON_MIN = 50
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
    lowered = strip_accents(query.lower())
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
    return await _search_postgres(session, room_id, words, limit, before_seq, after, from_seq)


def count_limit(cap: int) -> int:
    """Where the document-frequency count stops: `cap` rounded up to a power of two, written
    into the statement. As a parameter, the LIMIT is unknown to the generic plan PostgreSQL
    switches a prepared statement to after five runs on one connection (asyncpg prepares
    every statement): guessing it small, that plan scanned the table row by row instead of
    the GIN index, 37 ms instead of 2 ms at 10,000 turns. Rounded, a growing room makes a
    few distinct statements (one per doubling), not one per size."""
    return 1 << max(0, cap - 1).bit_length()


async def _search_postgres(
    session: AsyncSession,
    room_id: str,
    words: list[str],
    limit: int,
    before_seq: int | None,
    after: str,
    from_seq: int | None,
) -> list[MessageHit]:
    """Ranked by BM25 as FTS5 ranks: PostgreSQL's own ranks (ts_rank, ts_rank_cd) weigh every
    word alike, so a common word ("dance" in a dancer's room) outranked a rare one.

    First the room's size (the seq searched before, when given; else one index seek), then
    each word's document frequency in the room, counted up to COMMON_SHARE of it (one round
    trip, each count an index scan that stops there). Words that common add little to BM25
    and match most of the room: only turns holding a rarer word are ranked (when every word
    is common, all are searched). Each ranked turn scores the IDF of the words it
    holds, with BM25's length normalisation against the matches' average length (a word
    counts once per turn: turns are short)."""
    # Seqs count the room's messages (a deleted one leaves a gap: a logarithm barely moves).
    # A message's context searches before its own seq: that is the size, without a round trip
    # (once per query text: a question with sub-queries searched it four times).
    if before_seq is None:
        size_row = await session.execute(
            text("SELECT seq FROM message_fts WHERE room_id = :room ORDER BY seq DESC LIMIT 1"),
            {"room": room_id},
        )
        size = max(1, int(size_row.scalar() or 0))
    else:
        size = max(1, before_seq - 1)
    bound = before_seq if before_seq is not None else 2**62
    cap = max(COMMON_MIN, int(size * COMMON_SHARE))
    counts = await session.execute(
        text(
            "SELECT w, (SELECT count(*) FROM (SELECT 1 FROM message_fts AS f"
            " WHERE f.room_id = :room AND f.doc @@ to_tsquery('simple', w || ':*')"
            f" LIMIT {count_limit(cap)}) AS s) FROM unnest(CAST(:words AS text[])) AS w"
        ),
        {"room": room_id, "words": words},
    )
    frequency = {row[0]: min(int(row[1]), cap) for row in counts}
    present = [w for w in words if frequency.get(w, 0) > 0]
    if not present:
        return []
    rare = [w for w in present if frequency[w] < cap] or present
    idf = [math.log(1 + (size - frequency[w] + 0.5) / (frequency[w] + 0.5)) for w in present]
    rows = await session.execute(
        text(
            "WITH terms AS ("
            " SELECT to_tsquery('simple', w || ':*') AS q, idf"
            " FROM unnest(CAST(:words AS text[]), CAST(:idf AS float8[])) AS t(w, idf)), "
            "hits AS ("
            " SELECT f.message_id, f.seq, f.doc, length(f.doc) AS len FROM message_fts AS f"
            " WHERE f.room_id = :room AND f.seq < :bound"
            " AND f.doc @@ to_tsquery('simple', :match)" + after.format(seq="f.seq") + ") "
            "SELECT h.message_id, h.seq,"
            " (SELECT sum(t.idf) FROM terms AS t WHERE h.doc @@ t.q)"
            " * (:k1 + 1) / (1 + :k1 * (1 - :b + :b * h.len / greatest(avg(h.len) OVER (), 1)))"
            " AS score "
            "FROM hits AS h ORDER BY score DESC, h.seq DESC LIMIT :limit"
        ),
        {
            "words": present,
            "idf": idf,
            "match": " | ".join(f"{word}:*" for word in rare),
            "room": room_id,
            "start": from_seq,
            "bound": bound,
            "limit": limit,
            "k1": BM25_K1,
            "b": BM25_B,
        },
    )
    return [MessageHit(row[0], row[1], float(row[2])) for row in rows]
