"""The memory guard in the message pipeline: a short-circuit that answers from the cache, and
an after-reply hook that learns answers to cacheable intents. The rules are the guard's
(eko.guard.conversation); these stages only turn them into pipeline steps."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.pipeline import Draft, Note, Turn
from eko.chat.reply_meta import ReplyMeta
from eko.guard.conversation import CACHED_RESPONSE, ConversationGuard, GuardMiss
from eko.guard.service import ExactKey
from eko.llm.caller_format import META_KEY
from eko.store.models import Message


class MemoryGuardStage:
    """ShortCircuit: a close enough validated answer in the asker's scopes, with no model call."""

    name = "memory_guard"

    def __init__(self, guard: ConversationGuard) -> None:
        self._guard = guard

    async def read_ahead(self, session: AsyncSession, turn: Turn) -> ExactKey | None:
        """The exact key, read with the recent window (ReadsAhead): an exact hit is served
        without embedding the question, and a miss runs no transaction more for it."""
        if not cacheable(turn):
            return None
        return await self._guard.exact_key(
            session,
            question=turn.user_message.content,
            persona=turn.room.persona,
            user_public_id=turn.user.public_id,
        )

    async def respond(self, turn: Turn) -> Draft | Note | None:
        if not cacheable(turn):
            return None
        exact = turn.read_ahead.get(self.name)
        cached = await self._guard.answer(
            exact=exact if isinstance(exact, ExactKey) else None,
            question=turn.user_message.content,
            persona=turn.room.persona,
            user_public_id=turn.user.public_id,
            room_id=turn.room.id,
            message_id=turn.user_message.id,
            counted_by_caller=True,
        )
        if cached is None:
            return None
        if isinstance(cached, GuardMiss):
            return Note(cached.meta)  # why a close entry was refused, on the writer's reply
        guard = self._guard

        async def counted(session: AsyncSession) -> None:
            await guard.count_use(session, cached)

        # Counted with the reply that serves it: one transaction fewer, and no use counted for
        # a reply that was never stored.
        return Draft(
            content=cached.text,
            type=CACHED_RESPONSE,
            meta=ReplyMeta(**cached.meta),
            stored_with=counted,
        )


class GuardAutoLearn:
    """AfterReply: answers to the operator's cacheable intents are learned as they are stored,
    without waiting for feedback."""

    name = "memory_guard_learn"

    def __init__(self, guard: ConversationGuard) -> None:
        self._guard = guard

    async def after(self, turn: Turn, reply: Message) -> None:
        if cacheable(turn) and not reply.tool_calls:
            await self._guard.learn_cacheable(reply)


def cacheable(turn: Turn) -> bool:
    """False for a message whose reply is JSON or tool calls for an API caller, that carries
    tool results, or in a room with a caller's instructions (an OpenAI client's system
    message): such a reply is never served from the cache, nor learned into it (it has
    another shape than the prose the cache holds, or follows instructions others never gave)."""
    meta = turn.user_message.meta or {}
    if turn.room.instructions:
        return False
    return META_KEY not in meta and "tool_results" not in meta
