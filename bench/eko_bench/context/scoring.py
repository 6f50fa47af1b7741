"""Range coverage (the secondary measure) and summary counts."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select

from eko.memory.context_parts import SummaryPart
from eko.store.db import Database
from eko.store.memory_models import Summary


def covered(
    seqs: list[int],
    recent_first_seq: int | None,
    parts: Sequence[SummaryPart],
    ranges: dict[str, tuple[int, int]],
) -> list[bool]:
    result = []
    for seq in seqs:
        in_recent = recent_first_seq is not None and seq >= recent_first_seq
        in_summary = any(ranges[p.summary_id][0] <= seq <= ranges[p.summary_id][1] for p in parts)
        result.append(in_recent or in_summary)
    return result


async def summary_ranges(database: Database) -> dict[str, tuple[int, int]]:
    async with database.session() as session:
        rows = await session.execute(select(Summary.id, Summary.first_seq, Summary.last_seq))
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}


async def summary_levels(database: Database) -> dict[int, int]:
    async with database.session() as session:
        rows = await session.execute(select(Summary.level, func.count()).group_by(Summary.level))
        return {int(level): int(count) for level, count in rows}
