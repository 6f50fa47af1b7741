"""The memory guard in the message pipeline: a short-circuit that answers from the cache, and
an after-reply hook that learns answers to cacheable intents. The rules are the guard's
(eko.guard.conversation); these stages only turn them into pipeline steps."""

from __future__ import annotations

from eko.chat.pipeline import Draft, Turn
from eko.chat.reply_meta import ReplyMeta
from eko.guard.conversation import CACHED_RESPONSE, ConversationGuard
from eko.store.models import Message


class MemoryGuardStage:
    """ShortCircuit: a close enough validated answer in the asker's scopes, with no model call."""

    name = "memory_guard"

    def __init__(self, guard: ConversationGuard) -> None:
        self._guard = guard

    async def respond(self, turn: Turn) -> Draft | None:
        cached = await self._guard.answer(
            question=turn.user_message.content,
            persona=turn.room.persona,
            user_public_id=turn.user.public_id,
            room_id=turn.room.id,
            message_id=turn.user_message.id,
        )
        if cached is None:
            return None
        return Draft(content=cached.text, type=CACHED_RESPONSE, meta=ReplyMeta(**cached.meta))


class GuardAutoLearn:
    """AfterReply: answers to the operator's cacheable intents are learned as they are stored,
    without waiting for feedback."""

    name = "memory_guard_learn"

    def __init__(self, guard: ConversationGuard) -> None:
        self._guard = guard

    async def after(self, turn: Turn, reply: Message) -> None:
        await self._guard.learn_cacheable(reply)
