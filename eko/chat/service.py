"""Entry of the message pipeline: store the user message first, then answer through the stages."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.background import BackgroundTasks
from eko.chat.pipeline import AfterReply, Draft, ShortCircuit, Turn, Writer
from eko.config import Settings
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User

log = structlog.get_logger("eko.chat")


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


def reply_dedupe_key(user_message_id: str) -> str:
    return f"reply:{user_message_id}"


class ChatService:
    def __init__(
        self,
        *,
        database: Database,
        writer: Writer,
        settings: Settings,
        short_circuits: Sequence[ShortCircuit] = (),
        after_reply: Sequence[AfterReply] = (),
        background: BackgroundTasks | None = None,
    ) -> None:
        self._database = database
        self.writer = writer
        self._settings = settings
        self.short_circuits = list(short_circuits)
        self.after_reply = list(after_reply)
        self.background = background or BackgroundTasks()
        name = re.escape(settings.assistant_name)
        self._mention = re.compile(rf"(?<![\w@])@?{name}\b", re.IGNORECASE)
        # One lock per user message being answered in this process: concurrent duplicate
        # requests wait for the first answer instead of calling the model again. Across
        # workers, the unique dedupe key still stores one answer (the loser returns it).
        self._answering: dict[str, tuple[asyncio.Lock, int]] = {}

    def validate(self, content: str) -> str:
        text = content.strip()
        if not text:
            raise EmptyMessage("message content is empty")
        if len(text) > self._settings.max_message_chars:
            raise MessageTooLong(len(text), self._settings.max_message_chars)
        return text

    async def post(
        self,
        *,
        user: User,
        room: Room,
        content: str,
        client_message_id: str | None = None,
        respond: bool = True,
    ) -> Exchange:
        """Validate, store the user message (counted against the quota), then answer it
        (unless respond=False: the client asks for the answer later, POST /v1/chat/message)."""
        text = self.validate(content)
        token = client_message_id or uuid.uuid4().hex
        user_message, created = await message_repo.append_message(
            self._database,
            room_id=room.id,
            role="user",
            content=text,
            sender_id=user.id,
            dedupe_key=f"user:{room.id}:{user.id}:{token}",
            in_same_transaction=_count_quota,
        )
        assistant_message = None
        if respond and self.should_answer(room, text):
            assistant_message = await self.answer(
                Turn(user=user, room=room, user_message=user_message)
            )
        return Exchange(user_message, assistant_message, created)

    def should_answer(self, room: Room, text: str) -> bool:
        """A direct room always gets an answer; the lobby only when the assistant is named."""
        if room.kind == "direct":
            return True
        return bool(self._mention.search(text))

    async def answer(self, turn: Turn) -> Message:
        """Store (once) and return the assistant's answer to a stored user message."""
        key = turn.user_message.id
        lock, waiting = self._answering.get(key, (asyncio.Lock(), 0))
        self._answering[key] = (lock, waiting + 1)
        try:
            async with lock:
                return await self._answer_once(turn)
        finally:
            lock, waiting = self._answering[key]
            if waiting <= 1:
                del self._answering[key]
            else:
                self._answering[key] = (lock, waiting - 1)

    async def _answer_once(self, turn: Turn) -> Message:
        dedupe_key = reply_dedupe_key(turn.user_message.id)
        async with self._database.session() as session:
            existing = await message_repo.get_by_dedupe_key(session, dedupe_key=dedupe_key)
        if existing is not None:
            return existing
        draft = await self._draft(turn)
        reply, created = await message_repo.append_message(
            self._database,
            room_id=turn.room.id,
            role="assistant",
            type=draft.type,
            content=draft.content,
            reasoning=draft.reasoning,
            tool_calls=draft.tool_calls,
            meta=draft.meta,
            dedupe_key=dedupe_key,
            reply_to_id=turn.user_message.id,
        )
        if created:
            for hook in self.after_reply:
                self.background.spawn(hook.name, _bind(hook, turn, reply))
        return reply

    async def _draft(self, turn: Turn) -> Draft:
        for stage in self.short_circuits:
            draft = await stage.respond(turn)
            if draft is not None:
                draft.meta.setdefault("answered_by", stage.name)
                return draft
        return await self.writer.write(turn)


async def _count_quota(session: AsyncSession, message: Message) -> None:
    # The free quota counts a user's messages for life; never reset.
    if message.sender_id is not None:
        stored = await session.get(User, message.sender_id)
        if stored is not None:
            stored.free_quota_used += 1


def _bind(hook: AfterReply, turn: Turn, reply: Message) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        await hook.after(turn, reply)

    return run
