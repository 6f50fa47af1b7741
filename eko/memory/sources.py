"""The turn a memory item was learned from: its source message and the reply to it."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Message


async def source_turn(session: AsyncSession, *, message_id: str | None) -> list[Message]:
    """[source, reply] (the reply when there is one); [] when the source is gone or unknown."""
    if message_id is None:
        return []
    source = await session.get(Message, message_id)
    if source is None:
        return []
    replies = await session.execute(
        select(Message)
        .where(Message.reply_to_id == source.id, Message.room_id == source.room_id)
        .order_by(Message.seq.asc())
        .limit(1)
    )
    return [source, *replies.scalars()]
