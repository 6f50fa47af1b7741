"""Learning from stored replies: the rules the after-reply hook, members' feedback and staff
validation share (docs/guard.md).

Who may publish to the shared scope (served to everyone talking to the persona): only trusted
validators. Staff validation and the operator's cacheable intents follow the scope rule
(eko.guard.validation.reply_privacy): shared when the writer said the answer used no personal
context, else private to the asker. A member's thumbs up is never trusted with the shared
scope: it learns the answer for that member alone, and counts as a vote when agreement of K
distinct users is configured (eko.guard.agreement). Answers that used the user's facts, profile
or memory are never learned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import structlog
from sqlalchemy import select

from eko.embed.base import EmbeddingError
from eko.guard.agreement import ballot_meta
from eko.guard.normalize import strip_mention
from eko.guard.scope import Scope
from eko.guard.service import GuardService, Learned, NotLearnable
from eko.guard.validation import refusal_text, reply_privacy, reply_refusal
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.guard_models import GuardEntry
from eko.store.models import Message, Room, User

log = structlog.get_logger("eko.guard")

Validation = Literal["feedback", "staff", "auto"]
# Validators trusted to choose the shared scope (a member's "feedback" never is).
TrustedValidation = Literal["staff", "auto"]
ScopeChoice = Literal["auto", "shared", "private"]


@dataclass(frozen=True, slots=True)
class LearnOutcome:
    learned: Learned | None
    refused: str | None  # a reason slug when nothing was learned


@dataclass(frozen=True, slots=True)
class _Source:
    """What a reply answered: the question (without an address to the assistant), its room,
    and who asked it (None when that user no longer exists)."""

    question: Message
    text: str
    room: Room
    asker: User | None


class GuardLearning:
    """Turns a stored assistant reply into a cache entry when the rules allow it.

    `shared_min_agreeing_users` (EKO_GUARD_SHARED_MIN_AGREEING_USERS): K distinct users' thumbs
    up on the same answer to a question publish it to the shared scope; 0 = never.
    """

    def __init__(
        self,
        guard: GuardService,
        database: Database,
        *,
        assistant_name: str,
        shared_min_agreeing_users: int = 0,
    ) -> None:
        self._guard = guard
        self._database = database
        self._assistant_name = assistant_name
        self._min_agreeing = shared_min_agreeing_users

    async def learn_reply(
        self,
        reply: Message,
        *,
        validated_by: TrustedValidation,
        author: str,
        scope_choice: ScopeChoice = "auto",
    ) -> LearnOutcome:
        """Learn `reply` as the answer to the user message it replies to, for a trusted
        validator (staff, or the operator's cacheable intents).

        scope_choice "auto" applies the scope rule (reply_privacy); staff may choose "shared" or
        "private" instead, except for an answer that used personal context (never cached).
        """
        source = await self._source(reply)
        if isinstance(source, str):
            return LearnOutcome(None, source)
        meta = reply.meta or {}
        shared = scope_choice == "shared" or (
            scope_choice == "auto" and reply_privacy(meta) == "shared"
        )
        if shared:
            scope = Scope(source.room.persona)
        elif source.asker is not None:
            scope = Scope(source.room.persona, source.asker.public_id)
        else:
            return LearnOutcome(None, "no_asker")  # private to a user who no longer exists
        entry_meta = self._entry_meta(reply, source, validated_by=validated_by, author=author)
        return await self._learn(reply, source, scope, entry_meta, source_message_id=reply.id)

    async def learn_feedback(self, reply: Message, *, user_public_id: str) -> LearnOutcome:
        """A member's thumbs up: learned for that member alone, whatever reply_privacy says.

        What one member got the model to say is never published by that member; it counts
        as one vote towards the shared scope (eko.guard.agreement) when agreement is on.
        """
        source = await self._source(reply)
        if isinstance(source, str):
            return LearnOutcome(None, source)
        persona = source.room.persona
        scope = Scope(persona, user_public_id)
        existing = await self._guard.learned_from(scope, source.text, reply.id)
        if existing is not None:
            return LearnOutcome(Learned(existing, False), None)
        privacy = reply_privacy(reply.meta or {})
        entry_meta = {
            **self._entry_meta(
                reply, source, validated_by="feedback", author=f"user:{user_public_id}"
            ),
            **ballot_meta(persona, source.text, privacy),
        }
        # Not in the unique source_message_id column: several members of a lobby may each
        # validate the same reply for themselves (the message is in meta.source).
        outcome = await self._learn(reply, source, scope, entry_meta, source_message_id=None)
        if outcome.learned is not None and privacy == "shared":
            await self._settle(persona, source.text)
        return outcome

    async def retract_feedback(self, reply: Message, *, user_public_id: str) -> GuardEntry | None:
        """A member's thumbs down on a reply they validated: their entry is obsoleted (and their
        vote withdrawn). Returns the retracted entry, if there was one."""
        source = await self._source(reply)
        if isinstance(source, str):
            return None
        author = f"user:{user_public_id}"
        scope = Scope(source.room.persona, user_public_id)
        entry = await self._guard.learned_from(scope, source.text, reply.id)
        if entry is None:
            # An entry from before votes were private: it holds the message in
            # source_message_id; only its sole author may take it back.
            legacy = await self._guard.by_source_message(reply.id)
            legacy_meta = (legacy.meta or {}) if legacy is not None else {}
            if (
                legacy is None
                or legacy.status != "active"
                or legacy_meta.get("validated_by") != "feedback"
                or legacy_meta.get("authors") != [author]
            ):
                return None
            entry = legacy
        await self._guard.mark_obsolete(entry.id, reason="retracted", by=author)
        await self._settle(source.room.persona, source.text)
        return entry

    async def record_refusal(self, reply: Message, reason: str) -> None:
        """Why `reply` was not learned, on its metadata for staff pages: `memory_guard_learn`
        = {"refused": code, "reason": sentence}."""
        async with self._database.session() as session:
            message = (
                await session.execute(
                    select(Message).where(Message.id == reply.id).with_for_update()
                )
            ).scalar_one_or_none()
            if message is not None:
                refusal = {"refused": reason, "reason": refusal_text(reason)}
                message.meta = {**(message.meta or {}), "memory_guard_learn": refusal}

    async def _settle(self, persona: str, question: str) -> None:
        if self._min_agreeing <= 0:
            return
        try:
            settled = await self._guard.settle_agreement(
                persona=persona, question=question, min_users=self._min_agreeing
            )
        except (NotLearnable, EmbeddingError) as exc:
            # The vote itself is stored; the next vote or retraction settles again.
            log.warning("guard.agreement_failed", error=str(exc))
            return
        log.info(
            "guard.agreement",
            voters=settled.voters,
            min_users=self._min_agreeing,
            promoted=settled.promoted.id if settled.promoted else None,
            withdrawn=settled.withdrawn.id if settled.withdrawn else None,
        )

    async def _source(self, reply: Message) -> _Source | str:
        """The question `reply` answered, or the reason it cannot be learned."""
        if reply.role != "assistant":
            return "not_an_answer"
        reason = reply_refusal(message_type=reply.type, answer=reply.content, meta=reply.meta or {})
        if reason is not None:
            return reason
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
            return "no_question"
        text = strip_mention(question.content, self._assistant_name)
        return _Source(question, text, room, asker)

    @staticmethod
    def _entry_meta(
        reply: Message, source: _Source, *, validated_by: Validation, author: str
    ) -> dict[str, Any]:
        meta = reply.meta or {}
        intent = meta.get("intent")
        orchestrator = meta.get("orchestrator")
        confidence = meta.get("confidence")
        if confidence is None and isinstance(orchestrator, dict):
            confidence = orchestrator.get("confidence")
        return {
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
                "question_message_id": source.question.id,
                "room_id": source.room.id,
                "model": meta.get("model"),
            },
        }

    async def _learn(
        self,
        reply: Message,
        source: _Source,
        scope: Scope,
        meta: dict[str, Any],
        *,
        source_message_id: str | None,
    ) -> LearnOutcome:
        try:
            learned = await self._guard.learn(
                question=source.text,
                answer=reply.content,
                scope=scope,
                meta=meta,
                source_message_id=source_message_id,
            )
        except NotLearnable as exc:
            return LearnOutcome(None, exc.reason)
        except EmbeddingError as exc:
            log.warning("guard.learn_failed", error=str(exc), message_id=reply.id)
            return LearnOutcome(None, "embedder_unavailable")
        return LearnOutcome(learned, None)
