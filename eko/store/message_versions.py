"""Replace an assistant reply by a new version, keeping the one it replaces (message_versions);
`archive_current` and `set_content` serve an edited user message too (message_edits.py).

The reply keeps its id and seq; its char_count changes, so its char_end and those of the
messages after it move by the difference (the room's running character count stays exact).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.models import Message, Room, utcnow
from eko.store.version_models import MessageVersion


class NotAReply(ValueError):
    """Only a stored assistant reply to a user message has versions."""


async def replace_with_new_version(
    database: Database,
    *,
    message_id: str,
    content: str,
    type: str,
    meta: dict[str, Any],
    reasoning: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
) -> Message:
    """Archive the reply's current version and store the new one in its place (one transaction).

    The new version's metadata gains `version` (2, 3, …) and `regenerated_at`."""
    async with locked_message(
        database,
        message_id,
        accept=lambda m: m.role == "assistant" and m.reply_to_id is not None,
        refused=NotAReply,
    ) as (session, message):
        now = utcnow()
        version = await archive_current(session, message, now=now)
        message.type = type
        message.reasoning = reasoning
        message.tool_calls = tool_calls
        message.meta = {**meta, "version": version, "regenerated_at": now.isoformat()}
        await set_content(session, message, content)
        await session.refresh(message)
        return message


@asynccontextmanager
async def locked_message(
    database: Database,
    message_id: str,
    *,
    accept: Callable[[Message], bool],
    refused: Callable[[str], Exception],
) -> AsyncIterator[tuple[AsyncSession, Message]]:
    """A session holding the message's room append lock (and, on PostgreSQL, the room's row)
    and the message's own row, for a change of one stored message in place. Raises
    `refused(message_id)` when the message does not exist or `accept` refuses it."""
    async with database.session() as probe:
        current = await probe.get(Message, message_id)
        if current is None or not accept(current):
            raise refused(message_id)
        room_id = current.room_id
    async with database.keyed_locks.hold(f"room-append:{room_id}"), database.session() as session:
        if database.dialect == "postgresql":
            await session.execute(select(Room.id).where(Room.id == room_id).with_for_update())
        message = await session.get(Message, message_id, with_for_update=True)
        if message is None:
            raise refused(message_id)
        yield session, message


async def archive_current(session: AsyncSession, message: Message, *, now: datetime) -> int:
    """Keep `message`'s current version in message_versions; returns the next version's number.
    The caller holds the room's append lock and the message's row."""
    archived = int(
        await session.scalar(
            select(func.count())
            .select_from(MessageVersion)
            .where(MessageVersion.message_id == message.id)
        )
        or 0
    )
    old_meta = dict(message.meta or {})
    session.add(
        MessageVersion(
            message_id=message.id,
            version=archived + 1,
            type=message.type,
            content=message.content,
            meta=old_meta,
            written_at=_written_at(old_meta, message.created_at),
            replaced_at=now,
        )
    )
    return archived + 2


async def set_content(session: AsyncSession, message: Message, content: str) -> None:
    """New text for a stored message: its char_end and those after it move by the difference."""
    difference = len(content) - message.char_count
    message.content = content
    message.char_count = len(content)
    message.char_end += difference
    if difference:
        await session.execute(
            update(Message)
            .where(Message.room_id == message.room_id, Message.seq > message.seq)
            .values(char_end=Message.char_end + difference)
        )
    await session.flush()


async def list_versions(session: AsyncSession, *, message_id: str) -> Sequence[MessageVersion]:
    """The versions a reply replaced, oldest first (the reply itself holds the latest)."""
    result = await session.execute(
        select(MessageVersion)
        .where(MessageVersion.message_id == message_id)
        .order_by(MessageVersion.version.asc())
    )
    return result.scalars().all()


def _written_at(meta: dict[str, Any], created_at: datetime) -> datetime:
    stamp = meta.get("regenerated_at") or meta.get("edited_at")
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp)
        except ValueError:
            pass
    return created_at
