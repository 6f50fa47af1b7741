"""The memory guard in the message pipeline: a short-circuit that answers from the cache, an
after-reply hook that learns answers to cacheable intents, and the learning rule both the hook
and the feedback route share.

Scope rule (docs/guard.md, eko.guard.validation.reply_privacy): an answer is learned for
everyone talking to the room's persona only when the writer said it used no personal context
(`personal_context: False`). An answer whose prompt held only the room's earlier turns, or whose
writer does not say, is learned privately for the asker: served back to
them, never to anyone else. Answers that used the user's facts, profile or settings are never
learned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import structlog

from eko.chat.pipeline import Draft, Turn
from eko.embed.base import EmbeddingError
from eko.guard.normalize import strip_mention
from eko.guard.scope import Scope, lookup_scopes
from eko.guard.service import GuardService, Learned, NotLearnable
from eko.guard.validation import reply_privacy, reply_refusal
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, Room, User

log = structlog.get_logger("eko.guard")

Validation = Literal["feedback", "staff", "auto"]
ScopeChoice = Literal["auto", "shared", "private"]


class MemoryGuardStage:
    """ShortCircuit: a close enough validated answer in the asker's scopes, with no model call."""

    name = "memory_guard"

    def __init__(self, guard: GuardService, *, assistant_name: str, enabled: bool = True) -> None:
        self._guard = guard
        self._assistant_name = assistant_name
        self.enabled = enabled

    async def respond(self, turn: Turn) -> Draft | None:
        if not self.enabled:
            return None
        question = strip_mention(turn.user_message.content, self._assistant_name)
        try:
            result = await self._guard.lookup(
                question, lookup_scopes(turn.room.persona, turn.user.public_id)
            )
        except Exception as exc:
            # The cache is an optimisation: when it fails, the writer answers as usual.
            log.warning("guard.lookup_failed", error=str(exc), room_id=turn.room.id)
            return None
        if result.hit is None:
            return None
        return Draft(
            content=result.hit.entry.answer,
            type="cached_response",
            meta={
                "action": "respond_from_memory",
                "memory_guard": result.hit.as_meta(result.threshold),
            },
        )


@dataclass(frozen=True, slots=True)
class LearnOutcome:
    learned: Learned | None
    refused: str | None  # a reason slug when nothing was learned


class GuardLearning:
    """Turns a stored assistant reply into a cache entry when the rules allow it."""

    def __init__(self, guard: GuardService, database: Database, *, assistant_name: str) -> None:
        self._guard = guard
        self._database = database
        self._assistant_name = assistant_name

    async def learn_reply(
        self,
        reply: Message,
        *,
        validated_by: Validation,
        author: str,
        scope_choice: ScopeChoice = "auto",
    ) -> LearnOutcome:
        """Learn `reply` as the answer to the user message it replies to.

        scope_choice "auto" applies the scope rule (reply_privacy); staff may choose "shared" or
        "private" instead, except for an answer that used personal context (never cached).
        """
        if reply.role != "assistant":
            return LearnOutcome(None, "not_an_answer")
        meta = reply.meta or {}
        reason = reply_refusal(message_type=reply.type, answer=reply.content, meta=meta)
        if reason is not None:
            return LearnOutcome(None, reason)
        async with self._database.session() as session:
            question = (
                await message_repo.get_message(session, message_id=reply.reply_to_id)
                if reply.reply_to_id
                else None
            )
            room = await session.get(Room, reply.room_id)
            asker = (
                await session.get(User, question.sender_id)
                if question is not None and question.sender_id is not None
                else None
            )
        if question is None or question.role != "user" or room is None:
            return LearnOutcome(None, "no_question")
        shared = scope_choice == "shared" or (
            scope_choice == "auto" and reply_privacy(meta) == "shared"
        )
        if shared:
            scope = Scope(room.persona)
        elif asker is not None:
            scope = Scope(room.persona, asker.public_id)
        else:
            return LearnOutcome(None, "no_asker")  # private to a user who no longer exists
        intent = meta.get("intent")
        orchestrator = meta.get("orchestrator")
        confidence = meta.get("confidence")
        if confidence is None and isinstance(orchestrator, dict):
            confidence = orchestrator.get("confidence")
        entry_meta: dict[str, Any] = {
            "phase": meta.get("phase"),
            "project": meta.get("project"),
            "authors": [author],
            "initial_score": confidence,
            "tags": [intent] if isinstance(intent, str) and intent else [],
            "intent": intent,
            "validated_by": validated_by,
            "personal_context": meta.get("personal_context"),
            "source": {
                "message_id": reply.id,
                "question_message_id": question.id,
                "room_id": room.id,
                "model": meta.get("model"),
            },
        }
        try:
            learned = await self._guard.learn(
                question=strip_mention(question.content, self._assistant_name),
                answer=reply.content,
                scope=scope,
                meta=entry_meta,
                source_message_id=reply.id,
            )
        except NotLearnable as exc:
            return LearnOutcome(None, exc.reason)
        except EmbeddingError as exc:
            log.warning("guard.learn_failed", error=str(exc), message_id=reply.id)
            return LearnOutcome(None, "embedder_unavailable")
        return LearnOutcome(learned, None)


class GuardAutoLearn:
    """AfterReply: answers to intents listed in EKO_GUARD_CACHEABLE_INTENTS are learned as
    they are stored, without waiting for feedback."""

    name = "memory_guard_learn"

    def __init__(self, learning: GuardLearning, *, cacheable_intents: frozenset[str]) -> None:
        self._learning = learning
        self._intents = cacheable_intents

    async def after(self, turn: Turn, reply: Message) -> None:
        intent = (reply.meta or {}).get("intent")
        # No intent (the simple writer sets none): not automatically cacheable.
        if not isinstance(intent, str) or intent not in self._intents:
            return
        outcome = await self._learning.learn_reply(
            reply, validated_by="auto", author=f"intent:{intent}"
        )
        log.info(
            "guard.auto_learn",
            message_id=reply.id,
            learned=outcome.learned is not None,
            refused=outcome.refused,
        )
