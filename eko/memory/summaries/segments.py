"""Finding the next segment to summarize, from what is stored (never from a queue).

- L1: every `summarize_every_n_chars` raw characters of the room; a segment ends at the first
  message boundary at or past the threshold.
- L(k+1): consecutive Lk summaries once their characters reach the threshold.
The next segment of a level starts where that level's last summary ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.memory_models import Summary
from eko.store.models import Message

MESSAGE_PAGE = 500
# Lk summaries read when looking for the next L(k+1) segment (their characters add up to the
# threshold long before this, unless summaries are a few characters long).
CHILDREN_PAGE = 2000


@dataclass(slots=True)
class Segment:
    level: int
    char_range_start: int
    char_range_end: int
    first_seq: int
    last_seq: int
    messages: list[Message] = field(default_factory=list)  # level 1
    children: list[Summary] = field(default_factory=list)  # level ≥ 2

    @property
    def period(self) -> tuple[Any, Any]:
        if self.messages:
            return self.messages[0].created_at, self.messages[-1].created_at
        return self.children[0].period_start, self.children[-1].period_end


class SegmentFinder:
    """Which segment of a room is ready to be summarized next."""

    def __init__(self, database: Database, *, every: int) -> None:
        self._database = database
        self.every = every

    async def next_segment(self, room_id: str) -> Segment | None:
        """The highest level's ready segment first, so each new summary cascades upwards."""
        async with self._database.session() as session:
            top = (
                await session.execute(
                    select(Summary.level)
                    .where(Summary.room_id == room_id)
                    .order_by(Summary.level.desc())
                    .limit(1)
                )
            ).scalar()
            for level in range((top or 0) + 1, 1, -1):
                segment = await self._higher_segment(session, room_id, level)
                if segment is not None:
                    return segment
            return await self._l1_segment(session, room_id)

    async def pending_l1(self, room_id: str) -> int:
        """How many L1 summaries the stored messages call for now (higher levels follow)."""
        async with self._database.session() as session:
            start, _ = await _level_end(session, room_id, 1)
            head = await room_char_end(session, room_id)
        return max(0, (head - start) // self.every)

    async def exists(self, room_id: str, segment: Segment) -> bool:
        async with self._database.session() as session:
            found = await session.execute(
                select(Summary.id).where(
                    Summary.room_id == room_id,
                    Summary.level == segment.level,
                    Summary.char_range_start == segment.char_range_start,
                )
            )
            return found.first() is not None

    async def _l1_segment(self, session: AsyncSession, room_id: str) -> Segment | None:
        start, after_seq = await _level_end(session, room_id, 1)
        if await room_char_end(session, room_id) - start < self.every:
            return None
        messages: list[Message] = []
        cursor = after_seq
        while True:
            page = (
                (
                    await session.execute(
                        select(Message)
                        .where(Message.room_id == room_id, Message.seq > cursor)
                        .order_by(Message.seq)
                        .limit(MESSAGE_PAGE)
                    )
                )
                .scalars()
                .all()
            )
            for message in page:
                messages.append(message)
                if message.char_end - start >= self.every:
                    return Segment(
                        level=1,
                        char_range_start=start,
                        char_range_end=message.char_end,
                        first_seq=messages[0].seq,
                        last_seq=message.seq,
                        messages=messages,
                    )
            if len(page) < MESSAGE_PAGE:
                return None
            cursor = page[-1].seq

    async def _higher_segment(
        self, session: AsyncSession, room_id: str, level: int
    ) -> Segment | None:
        start, _ = await _level_end(session, room_id, level)
        children = (
            (
                await session.execute(
                    select(Summary)
                    .where(
                        Summary.room_id == room_id,
                        Summary.level == level - 1,
                        Summary.char_range_start >= start,
                    )
                    .order_by(Summary.char_range_start)
                    .limit(CHILDREN_PAGE)
                )
            )
            .scalars()
            .all()
        )
        total = 0
        for index, child in enumerate(children):
            total += child.char_count
            if total >= self.every:
                chosen = list(children[: index + 1])
                return Segment(
                    level=level,
                    char_range_start=chosen[0].char_range_start,
                    char_range_end=chosen[-1].char_range_end,
                    first_seq=chosen[0].first_seq,
                    last_seq=chosen[-1].last_seq,
                    children=chosen,
                )
        return None


async def _level_end(session: AsyncSession, room_id: str, level: int) -> tuple[int, int]:
    """(char_range_end, last_seq) of the level's last summary; (0, 0) when none."""
    row = (
        await session.execute(
            select(Summary.char_range_end, Summary.last_seq)
            .where(Summary.room_id == room_id, Summary.level == level)
            .order_by(Summary.char_range_end.desc())
            .limit(1)
        )
    ).first()
    return (int(row[0]), int(row[1])) if row else (0, 0)


async def room_char_end(session: AsyncSession, room_id: str) -> int:
    value = (
        await session.execute(
            select(Message.char_end)
            .where(Message.room_id == room_id)
            .order_by(Message.seq.desc())
            .limit(1)
        )
    ).scalar()
    return int(value or 0)
