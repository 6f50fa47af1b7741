"""What the harness reads and writes in the server's database directly: users in, counts out.

Users are created through the store (as `eko users create --pro` does, without a process per
user). Counts are read from the database rather than from the HTTP answers, because the
database is the source of truth: a request that timed out may still have stored a message, and
one that answered may have stored two.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select

from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Message


async def create_pro_users(database_url: str, names: Sequence[str]) -> list[str]:
    """One pro user per name (never paywalled); their API keys, in order."""
    database = Database(database_url)
    try:
        keys = []
        async with database.session() as session:
            for name in names:
                _, key = await user_repo.create_user(session, display_name=name, is_pro=True)
                keys.append(key)
        return keys
    finally:
        await database.dispose()


@dataclass
class RoomCounts:
    """Stored messages of some rooms."""

    user_messages: int = 0
    # Assistant messages: every stored reply, whatever its type (message, fallback, …).
    replies: int = 0
    # Replies per type ("message", "fallback", "cached_response", …).
    reply_types: dict[str, int] = field(default_factory=dict)
    # Replies of type "message" per provider that wrote them (metadata "provider").
    providers: dict[str, int] = field(default_factory=dict)
    # User messages with no reply, and with more than one.
    unanswered: int = 0
    replied_twice: int = 0


async def count_rooms(database_url: str, room_ids: Sequence[str]) -> RoomCounts:
    database = Database(database_url)
    try:
        async with database.session() as session:
            rows = (
                await session.execute(
                    select(
                        Message.id, Message.role, Message.type, Message.meta, Message.reply_to_id
                    ).where(Message.room_id.in_(list(room_ids)))
                )
            ).all()
    finally:
        await database.dispose()
    counts = RoomCounts()
    replies_to: dict[str, int] = {}
    user_ids = []
    for message_id, role, kind, meta, reply_to_id in rows:
        if role == "user":
            counts.user_messages += 1
            user_ids.append(message_id)
        elif role == "assistant":
            counts.replies += 1
            counts.reply_types[kind] = counts.reply_types.get(kind, 0) + 1
            provider = (meta or {}).get("provider")
            if kind == "message" and provider:
                counts.providers[provider] = counts.providers.get(provider, 0) + 1
            if reply_to_id is not None:
                replies_to[reply_to_id] = replies_to.get(reply_to_id, 0) + 1
    counts.unanswered = sum(1 for i in user_ids if replies_to.get(i, 0) == 0)
    counts.replied_twice = sum(1 for i in user_ids if replies_to.get(i, 0) > 1)
    return counts


async def settled_counts(
    database_url: str, room_ids: Sequence[str], *, quiet_s: float = 1.0, bound_s: float = 30.0
) -> RoomCounts:
    """Counts once they stop changing for `quiet_s` (work still finishing after the responses),
    or after `bound_s` whatever they are."""
    deadline = time.monotonic() + bound_s
    counts = await count_rooms(database_url, room_ids)
    while time.monotonic() < deadline:
        await asyncio.sleep(quiet_s)
        again = await count_rooms(database_url, room_ids)
        if again == counts:
            return again
        counts = again
    return counts
