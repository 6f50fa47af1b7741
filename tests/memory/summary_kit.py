"""Helpers of the summary tests: a room filled with fixed-size messages and the summary ranges
it must get (EVERY characters per L1 summary, 3 children per level)."""

from __future__ import annotations

from sqlalchemy import select

from eko.store.memory_models import Summary
from eko.store.models import Room, User

from .conftest import MemoryKit

EVERY = 300


async def fill(kit: MemoryKit, room: Room, user: User, count: int, size: int = 100) -> None:
    """`count` messages of `size` characters, alternating user / assistant."""
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"m{i} ".ljust(size, "x")
        await kit.say(room, text, user=user if role == "user" else None, role=role)


async def ranges(kit: MemoryKit, room_id: str) -> list[tuple[int, int, int]]:
    async with kit.database.session() as session:
        rows = await session.execute(
            select(Summary.level, Summary.char_range_start, Summary.char_range_end)
            .where(Summary.room_id == room_id)
            .order_by(Summary.level, Summary.char_range_start)
        )
        return [(int(a), int(b), int(c)) for a, b, c in rows]


def expected_ranges(total_chars: int) -> list[tuple[int, int, int]]:
    """Messages of 100 chars, summaries of 100 chars, EVERY = 300: 3 per level."""
    expected = []
    span, level = EVERY, 1
    while total_chars // span:
        expected += [(level, i * span, (i + 1) * span) for i in range(total_chars // span)]
        span, level = span * 3, level + 1
    return expected
