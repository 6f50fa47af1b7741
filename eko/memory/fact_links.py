"""Turn → facts: the facts and self-knowledge drawn from given messages.

The other direction of a fact's link to its source (a fact pulls its turn: context.py's
`source_seqs`). A turn recalled into the context brings the items whose `source_message_id`
is that turn, so the model sees what was learned from it next to what was said.

Visibility is the caller's: only items whose scope is one of `keys` (eko.memory.scopes
.turn_keys) are returned. A message may be the source of items in several scopes (a user's
private fact and a room's), and one user's private facts never reach another user through a
shared turn. Items are deleted outright (MemoryItems.delete), so every row is live; an answered
goal is settled (its answer is a fact) and is never returned.

One bounded query: `source_message_id IN (...)` on ix_memory_items_source (migration 0010),
ordered by the position of the message in `message_ids`, then newest first, with a LIMIT.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.memory_models import MemoryItem

DEFAULT_KINDS = ("fact", "self")
# Messages looked up per call: the first ones of `message_ids` (a context recalls tens).
MAX_MESSAGE_IDS = 500


async def facts_of_messages(
    session: AsyncSession,
    *,
    message_ids: Sequence[str],
    keys: Sequence[str],
    kinds: Sequence[str] = DEFAULT_KINDS,
    limit: int,
) -> list[MemoryItem]:
    """Items drawn from `message_ids` within the scopes `keys`, in the order of `message_ids`
    (the items of one message newest first), at most `limit`."""
    query = facts_query(
        message_ids=message_ids,
        keys=keys,
        kinds=kinds,
        limit=limit,
        dialect=session.get_bind().dialect.name,
    )
    if query is None:
        return []
    return list((await session.execute(query)).scalars().all())


def facts_query(
    *,
    message_ids: Sequence[str],
    keys: Sequence[str],
    kinds: Sequence[str],
    limit: int,
    dialect: str = "sqlite",
) -> Select[MemoryItem] | None:
    """The one bounded query of facts_of_messages (None when nothing can match)."""
    positions: dict[str, int] = {}
    for message_id in message_ids:
        if message_id and message_id not in positions:
            positions[message_id] = len(positions)
            if len(positions) >= MAX_MESSAGE_IDS:
                break
    if not positions or not keys or not kinds or limit <= 0:
        return None
    # The position of the source in the list: where "|<id>|" starts in one bound string of
    # the ids in order. A CASE of one WHEN per id said the same, but building it cost ~2 ms
    # of Python per context (tens of ids), more than the query itself.
    listed = "|" + "|".join(positions) + "|"
    token = literal("|") + MemoryItem.source_message_id + literal("|")
    position = func.strpos(listed, token) if dialect == "postgresql" else func.instr(listed, token)
    return (
        select(MemoryItem)
        .where(
            MemoryItem.source_message_id.in_(list(positions)),
            # `scope || ''`: not a term an index on scope can serve, so the planner always
            # starts from the source index (SQLite, without statistics, would otherwise scan
            # every item of the caller's scopes through ix_memory_items_dedup).
            (MemoryItem.scope + "").in_(list(keys)),
            MemoryItem.kind.in_(list(kinds)),
            or_(MemoryItem.status.is_(None), MemoryItem.status != "answered"),
        )
        .order_by(position, MemoryItem.updated_at.desc(), MemoryItem.id)
        .limit(limit)
    )
