"""Entry of the message pipeline: store the user message first, then decide and write a reply."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.reply import ReplyWriter
from eko.config import Settings
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User


class MessageTooLong(ValueError):
    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"message is {length} characters; the limit is {limit}")
        self.length = length
        self.limit = limit


class EmptyMessage(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Exchange:
    user_message: Message
    assistant_message: Message | None
    # False when the same client message id was posted before (nothing new stored).
    created: bool


class ChatService:
    def __init__(self, *, database: Database, writer: ReplyWriter, settings: Settings) -> None:
        self._database = database
        self._writer = writer
        self._settings = settings
        name = re.escape(settings.assistant_name)
        self._mention = re.compile(rf"(?<![\w@])@?{name}\b", re.IGNORECASE)

    def validate(self, content: str) -> str:
        text = content.strip()
        if not text:
            raise EmptyMessage("message content is empty")
        if len(text) > self._settings.max_message_chars:
            raise MessageTooLong(len(text), self._settings.max_message_chars)
        return text

    async def post(
        self, *, user: User, room: Room, content: str, client_message_id: str | None = None
    ) -> Exchange:
        """Validate, store the user message (and count it against the quota), then reply."""
        text = self.validate(content)
        dedupe_key = (
            f"user:{room.id}:{user.id}:{client_message_id}"
            if client_message_id
            else f"user:{room.id}:{user.id}:{uuid.uuid4().hex}"
        )

        async def count_quota(session: AsyncSession, _message: Message) -> None:
            # The free quota counts a user's messages for life; never reset.
            stored = await session.get(User, user.id)
            if stored is not None:
                stored.free_quota_used += 1

        user_message, created = await message_repo.append_message(
            self._database,
            room_id=room.id,
            role="user",
            content=text,
            sender_id=user.id,
            dedupe_key=dedupe_key,
            in_same_transaction=count_quota,
        )
        assistant_message = None
        if self.should_answer(room, text):
            assistant_message = await self._writer.reply(room=room, user_message=user_message)
        return Exchange(user_message, assistant_message, created)

    def should_answer(self, room: Room, text: str) -> bool:
        """A direct room always gets an answer; the lobby only when the assistant is named."""
        if room.kind == "direct":
            return True
        return bool(self._mention.search(text))

