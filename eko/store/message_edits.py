"""Edit a person's last message: the edited text becomes its new version, the old one is kept
in message_versions (as for a regenerated reply), and the edit counts against the free quota
like a new message. The message keeps its id and place; only the room's last exchange may be
edited (an earlier one would leave the answers after it answering another question).
"""

from __future__ import annotations

from sqlalchemy import or_, select, update

from eko.store.db import Database
from eko.store.message_versions import archive_current, locked_message, set_content
from eko.store.models import Message, User, utcnow


class NotEditable(ValueError):
    """Not a user message, or not the room's last exchange."""


async def edit_user_message(database: Database, *, message_id: str, content: str) -> Message:
    """Store `content` as the new version of user message `message_id` (one transaction, the
    sender's free quota counted). Raises NotEditable when a message other than its own reply
    follows it. Its metadata gains `version` (2, 3, …) and `edited_at`."""
    async with locked_message(
        database, message_id, accept=lambda m: m.role == "user", refused=NotEditable
    ) as (session, message):
        room_id = message.room_id
        later = await session.scalar(
            select(Message.id)
            .where(
                Message.room_id == room_id,
                Message.seq > message.seq,
                or_(Message.reply_to_id.is_(None), Message.reply_to_id != message.id),
            )
            .limit(1)
        )
        if later is not None:
            raise NotEditable(message_id)
        now = utcnow()
        version = await archive_current(session, message, now=now)
        message.meta = {**(message.meta or {}), "version": version, "edited_at": now.isoformat()}
        await set_content(session, message, content)
        if message.sender_id is not None:
            await session.execute(
                update(User)
                .where(User.id == message.sender_id)
                .values(free_quota_used=User.free_quota_used + 1)
                .execution_options(synchronize_session=False)
            )
        await session.refresh(message)
        return message
