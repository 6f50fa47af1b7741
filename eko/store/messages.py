"""Message repository. Messages are appended with a per-room sequence and an idempotency key."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.models import Message, Room, utcnow

# Appends to one room are serialized in this process (Database.keyed_locks) and, on
# PostgreSQL, across processes by locking the room's row. What is left (SQLite writers in other
# processes, a writer of another room holding SQLite's lock) is retried with a fresh read.
APPEND_ATTEMPTS = 12

SessionHook = Callable[[AsyncSession, Message], Awaitable[None]]


async def append_message(
    database: Database,
    *,
    room_id: str,
    role: str,
    content: str,
    dedupe_key: str,
    sender_id: int | None = None,
    type: str = "message",
    reasoning: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    reply_to_id: str | None = None,
    created_at: datetime | None = None,
    in_same_transaction: SessionHook | None = None,
    look_first: bool = True,
) -> tuple[Message, bool]:
    """Store one message in its own transaction. Returns (message, created).

    If a message with the same dedupe_key exists, it is returned with created=False and nothing
    is written. `in_same_transaction` runs inside the insert's transaction (e.g. a quota count),
    so both happen or neither does. `look_first=False`: no message is expected to hold the key
    (a fresh random token; or a reply whose caller has just looked, or holds its message's
    outbox lease), so there is no look, before the lock or under it: the key is unique in the
    table, so a message stored with it meanwhile fails the insert, and the retry looks and
    returns that message.
    """
    if look_first:
        # Fast path for retries and duplicates: they need no lock to find what is stored.
        async with database.session() as session:
            existing = await get_by_dedupe_key(session, dedupe_key=dedupe_key)
        if existing is not None:
            return existing, False
    async with database.keyed_locks.hold(f"room-append:{room_id}"):
        return await _append_with_retries(
            database,
            dedupe_key=dedupe_key,
            look_first=look_first,
            in_same_transaction=in_same_transaction,
            fields={
                "room_id": room_id,
                "sender_id": sender_id,
                "role": role,
                "type": type,
                "content": content,
                "reasoning": reasoning,
                "tool_calls": tool_calls,
                "meta": meta or {},
                "reply_to_id": reply_to_id,
                "created_at": created_at,
            },
        )


async def _append_with_retries(
    database: Database,
    *,
    dedupe_key: str,
    in_same_transaction: SessionHook | None,
    fields: dict[str, Any],
    look_first: bool = True,
) -> tuple[Message, bool]:
    """`look_first`: look the key up before the first insert too (a retry always looks)."""
    room_id = fields["room_id"]
    content = fields["content"]
    for attempt in range(APPEND_ATTEMPTS):
        try:
            async with database.session() as session:
                if look_first or attempt > 0:
                    existing = await get_by_dedupe_key(session, dedupe_key=dedupe_key)
                    if existing is not None:
                        return existing, False
                if database.dialect == "postgresql":
                    # Other API processes append to this room too: its row is the lock.
                    await session.execute(
                        select(Room.id).where(Room.id == room_id).with_for_update()
                    )
                # The seq and running length follow the room's last message, read by the
                # INSERT itself: one statement, whose RETURNING is the stored message.
                last = (
                    select(Message.seq, Message.char_end)
                    .where(Message.room_id == room_id)
                    .order_by(Message.seq.desc())
                    .limit(1)
                    .subquery()
                )
                stored = await session.scalars(
                    insert(Message)
                    .values(
                        **{**fields, "created_at": fields["created_at"] or utcnow()},
                        seq=func.coalesce(select(last.c.seq).scalar_subquery(), 0) + 1,
                        char_count=len(content),
                        char_end=func.coalesce(select(last.c.char_end).scalar_subquery(), 0)
                        + len(content),
                        dedupe_key=dedupe_key,
                    )
                    .returning(Message)
                )
                message = stored.one()
                if in_same_transaction is not None:
                    await in_same_transaction(session, message)
            return message, True
        except (IntegrityError, OperationalError):
            # A concurrent writer took this seq or this dedupe key (or held SQLite's lock):
            # re-read and try again; the dedupe check above turns a duplicate into a no-op.
            if attempt == APPEND_ATTEMPTS - 1:
                raise
            await asyncio.sleep(random.uniform(0.005, 0.03) * min(2**attempt, 32))
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class NewMessage:
    """One message of a batch appended by `append_many`."""

    role: str
    content: str
    dedupe_key: str
    sender_id: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None


async def append_many(
    database: Database, *, room_id: str, messages: Sequence[NewMessage]
) -> list[tuple[Message, bool]]:
    """Store a batch of messages in order, in one transaction: all of them or none. Returns
    (message, created) per message, in order; a message whose dedupe_key is already stored is
    returned with created=False and not written again (so a retried batch stores only what is
    missing). No hook runs: nothing is counted against a quota and nothing is owed an answer."""
    keys = [m.dedupe_key for m in messages]
    if len(set(keys)) != len(keys):
        raise ValueError("the batch repeats a dedupe key")
    async with database.keyed_locks.hold(f"room-append:{room_id}"):
        for attempt in range(APPEND_ATTEMPTS):
            try:
                async with database.session() as session:
                    return await _append_batch(session, database.dialect, room_id, messages)
            except (IntegrityError, OperationalError):
                if attempt == APPEND_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(random.uniform(0.005, 0.03) * min(2**attempt, 32))
    raise AssertionError("unreachable")


async def _append_batch(
    session: AsyncSession, dialect: str, room_id: str, messages: Sequence[NewMessage]
) -> list[tuple[Message, bool]]:
    if dialect == "postgresql":
        await session.execute(select(Room.id).where(Room.id == room_id).with_for_update())
    stored: dict[str, Message] = {}
    keys = [m.dedupe_key for m in messages]
    for start in range(0, len(keys), 500):
        rows = await session.execute(
            select(Message).where(Message.dedupe_key.in_(keys[start : start + 500]))
        )
        stored.update((m.dedupe_key, m) for m in rows.scalars() if m.dedupe_key)
    last = (
        await session.execute(
            select(Message.seq, Message.char_end)
            .where(Message.room_id == room_id)
            .order_by(Message.seq.desc())
            .limit(1)
        )
    ).first()
    seq, char_end = (last[0], last[1]) if last else (0, 0)
    result: list[tuple[Message, bool]] = []
    for new in messages:
        existing = stored.get(new.dedupe_key)
        if existing is not None:
            result.append((existing, False))
            continue
        seq += 1
        char_end += len(new.content)
        message = Message(
            room_id=room_id,
            sender_id=new.sender_id,
            role=new.role,
            type="message",
            content=new.content,
            meta=dict(new.meta),
            created_at=new.created_at or utcnow(),
            seq=seq,
            char_count=len(new.content),
            char_end=char_end,
            dedupe_key=new.dedupe_key,
        )
        session.add(message)
        result.append((message, True))
    await session.flush()
    return result


async def update_meta(session: AsyncSession, *, message_id: str, meta: dict[str, Any]) -> None:
    message = await session.get(Message, message_id)
    if message is not None:
        message.meta = {**(message.meta or {}), **meta}


async def get_message(session: AsyncSession, *, message_id: str) -> Message | None:
    return await session.get(Message, message_id)


async def seqs_of_messages(
    session: AsyncSession, *, room_id: str, message_ids: Sequence[str]
) -> dict[str, int]:
    """{message id: seq} of those of `message_ids` that belong to the room.

    Read by primary key alone, the room checked here: with the room in the WHERE clause, SQLite
    (no statistics gathered) took the (room_id, created_at) index for any list of more than a
    few ids and read the room's every row — 3 ms per lookup at 10,000 turns, five lookups per
    list question."""
    ids = list(dict.fromkeys(message_ids))
    if not ids:
        return {}
    rows = await session.execute(
        select(Message.id, Message.seq, Message.room_id)
        .where(Message.id.in_(ids))
        .limit(len(ids))  # ids are unique: bounded by the list
    )
    return {row[0]: int(row[1]) for row in rows if row[2] == room_id}


async def get_by_dedupe_key(session: AsyncSession, *, dedupe_key: str) -> Message | None:
    result = await session.execute(select(Message).where(Message.dedupe_key == dedupe_key))
    return result.scalar_one_or_none()


async def list_messages(
    session: AsyncSession,
    *,
    room_id: str,
    limit: int,
    before_seq: int | None = None,
    after_seq: int | None = None,
) -> Sequence[Message]:
    """One page in chronological order: the newest `limit` before `before_seq`, or the oldest
    `limit` after `after_seq`."""
    query = select(Message).where(Message.room_id == room_id)
    if after_seq is not None:
        query = query.where(Message.seq > after_seq).order_by(Message.seq.asc())
        result = await session.execute(query.limit(limit))
        return result.scalars().all()
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    result = await session.execute(query.order_by(Message.seq.desc()).limit(limit))
    return list(reversed(result.scalars().all()))


async def recent_messages(
    session: AsyncSession, *, room_id: str, limit: int, up_to_seq: int | None = None
) -> Sequence[Message]:
    """The last `limit` messages of a room (up to and including `up_to_seq`), chronological."""
    before = None if up_to_seq is None else up_to_seq + 1
    return await list_messages(session, room_id=room_id, limit=limit, before_seq=before)
