"""Turns of the periods a question names ("what did Maria share on 16 June, 2023?"): the days
and months of eko.memory.dates, turned into the room's seq ranges (two index seeks each,
migration 0011) and searched by the question's other words within them.

Words and meaning rank the whole room; a date narrows it to the turns of that day, which
neither ranking knows about. The result is one more ranking that recall_turns interleaves.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.memory.dates import Period
from eko.store.message_search import query_words, search_messages
from eko.store.models import Message

# A day named in the speaker's time zone, stored in UTC: up to 14 hours either side.
MARGIN = timedelta(hours=14)
# Periods looked at per question (a question rarely names more than two).
MAX_PERIODS = 3


async def seq_span(
    session: AsyncSession, *, room_id: str, period: Period, before_seq: int | None
) -> tuple[int, int] | None:
    """[first, last + 1) of the room's messages in `period` (with the margin), None if none."""
    inside = select(Message.seq).where(
        Message.room_id == room_id,
        Message.created_at >= period.start - MARGIN,
        Message.created_at < period.end + MARGIN,
    )
    if before_seq is not None:
        inside = inside.where(Message.seq < before_seq)
    first = (await session.execute(inside.order_by(Message.created_at).limit(1))).scalar()
    last = (await session.execute(inside.order_by(Message.created_at.desc()).limit(1))).scalar()
    if first is None or last is None:
        return None
    return min(first, last), max(first, last) + 1


async def dated_turns(
    session: AsyncSession,
    *,
    dialect: str,
    room_id: str,
    query: str,
    periods: Sequence[Period],
    before_seq: int | None,
    limit: int,
    ignore: Collection[str] = (),
) -> list[int]:
    """Seqs of each period's turns that share the question's words (the date's own words
    left out), best first; when fewer than `limit` do, the period's first turns after them."""
    dropped = set(ignore) | {word for period in periods for word in query_words(period.text)}
    seqs: list[int] = []
    for period in periods[:MAX_PERIODS]:
        span = await seq_span(session, room_id=room_id, period=period, before_seq=before_seq)
        if span is None:
            continue
        start, end = span
        hits = await search_messages(
            session,
            dialect=dialect,
            room_id=room_id,
            query=query,
            limit=limit,
            from_seq=start,
            before_seq=end,
            ignore=dropped,
        )
        seqs += [hit.seq for hit in hits]
        seqs += list(range(start, min(end, start + max(0, limit - len(hits)))))
    return list(dict.fromkeys(seqs))
