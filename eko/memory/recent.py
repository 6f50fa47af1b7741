"""The dual context's recent window: the last turns of the room, verbatim."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.config import Settings
from eko.memory.context_parts import EMPTY_RECENT, RecentPart
from eko.memory.turns import ConversationTurn, TurnStyle, group_turns, render_turns
from eko.store.db import Database
from eko.store.models import Message, User

# Messages read for the recent window per wanted turn (a turn is a message and its answers).
MESSAGES_PER_TURN = 3


async def read_recent(
    database: Database, settings: Settings, room_id: str, before_seq: int | None, max_chars: int
) -> RecentPart:
    """The last `recent_turns` turns before `before_seq`, at most `max_chars`, chronological;
    the newest turn is always kept (cut if needed)."""
    async with database.session() as session:
        query = select(Message).where(Message.room_id == room_id)
        if before_seq is not None:
            query = query.where(Message.seq < before_seq)
        rows = (
            await session.execute(
                query.order_by(Message.seq.desc()).limit(settings.recent_turns * MESSAGES_PER_TURN)
            )
        ).scalars()
        messages = list(reversed(rows.all()))
        names = await _names(session, messages)
    turns = group_turns(messages)[-settings.recent_turns :]
    style = TurnStyle(mode="context", assistant_label=f"Assistant ({settings.assistant_name})")
    kept: list[ConversationTurn] = []
    used = 0
    for turn in reversed(turns):
        size = len(render_turns([turn], names, style=style)) + (2 if kept else 0)
        if kept and used + size > max_chars:
            break
        kept.insert(0, turn)
        used += size
    if not kept:
        return EMPTY_RECENT
    text = render_turns(kept, names, style=style, max_chars=max_chars)
    return RecentPart(
        turns=len(kept),
        messages=sum(len(turn.messages) for turn in kept),
        first_seq=kept[0].first_seq,
        char_start=kept[0].char_start,
        text=text,
    )


async def _names(session: AsyncSession, messages: Sequence[Message]) -> dict[int, str]:
    ids = {m.sender_id for m in messages if m.sender_id is not None}
    if not ids:
        return {}
    rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
    return {row[0]: row[1] for row in rows}
