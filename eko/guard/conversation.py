"""The memory guard as the message pipeline meets it: its one entry point (docs/guard.md).

- A new message: whether it is looked up (the guard is on), as which question (without an
  address to the assistant), in which scopes (shared, then the asker's own), and what a hit
  becomes (the entry's answer and the metadata of the reply that serves it). The cache is an
  optimisation: when the lookup fails, nothing is served and the writer answers as usual.
- A stored reply: learned at once when its intent is one the operator listed as cacheable.
- A member's rating: a cached answer's entry counts it; a thumbs up on a model's answer learns
  it for the rater; a thumbs down takes back what their thumbs up learned.
- A regenerated reply: the entry learned from it is never served again.

Chat turns a CachedAnswer into its reply and calls the others from its after-reply hook, its
feedback service and the regenerate route; staff validation reaches the same rules through
`learning`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.guard.normalize import strip_mention
from eko.guard.replies import GuardLearning
from eko.guard.scope import lookup_scopes
from eko.guard.service import ExactKey, GuardService
from eko.store.models import Message

log = structlog.get_logger("eko.guard")

Rating = Literal["up", "down"]
# The message type of a reply served from the cache (never learned again, see validation.py).
CACHED_RESPONSE = "cached_response"


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A hit, as the reply that serves it: the entry's answer and the reply's metadata."""

    text: str
    meta: dict[str, Any]
    entry_id: str
    score: float


@dataclass(frozen=True, slots=True)
class GuardMiss:
    """Nothing served although an entry was close enough: why, as the metadata of the reply
    the writer makes instead (`memory_guard: {"served": false, "reason": "language", …}`)."""

    meta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RatingEffect:
    """What a rating did to the cache."""

    entry_id: str | None = None  # the entry learned from (or rated through) the message
    learned: bool = False  # a new entry was created by this rating
    refused: str | None = None  # why a thumbs up did not become an entry
    retracted: bool = False  # a thumbs down took back the entry this user's thumbs up created


class ConversationGuard:
    def __init__(
        self,
        service: GuardService,
        learning: GuardLearning,
        *,
        assistant_name: str,
        enabled: bool = True,
        cacheable_intents: frozenset[str] = frozenset(),
    ) -> None:
        self._service = service
        self._assistant_name = assistant_name
        self._enabled = enabled
        self._intents = cacheable_intents
        # Public: staff validation learns messages through the same rules.
        self.learning = learning

    async def exact_key(
        self, session: AsyncSession, *, question: str, persona: str, user_public_id: str
    ) -> ExactKey | None:
        """The exact key `answer` would read for this question, read in the caller's
        transaction (the chat reads it with the recent window): an exact hit is then served
        without embedding, and a miss costs no transaction more. None: not read."""
        if not self._enabled:
            return None
        return await self._service.exact_key(
            session,
            strip_mention(question, self._assistant_name),
            lookup_scopes(persona, user_public_id),
        )

    async def answer(
        self,
        *,
        question: str,
        persona: str,
        user_public_id: str,
        room_id: str,
        message_id: str,
        exact: ExactKey | None = None,
        counted_by_caller: bool = False,
    ) -> CachedAnswer | GuardMiss | None:
        """A close enough validated answer to `question` in the asker's scopes, if any; else
        why a close enough entry was refused, if one was. `exact`: its exact key as
        `exact_key` read it. `counted_by_caller`: the caller counts the hit (`count_use`) in
        the transaction that stores the reply serving it."""
        if not self._enabled:
            return None
        try:
            result = await self._service.lookup(
                strip_mention(question, self._assistant_name),
                lookup_scopes(persona, user_public_id),
                room_id=room_id,
                message_id=message_id,
                exact=exact,
                counted_by_caller=counted_by_caller,
            )
        except Exception as exc:
            log.warning("guard.lookup_failed", error=str(exc), room_id=room_id)
            return None
        if result.hit is None:
            miss = result.miss_meta()
            return None if miss is None else GuardMiss({"memory_guard": miss})
        return CachedAnswer(
            result.hit.entry.answer,
            {
                "action": "respond_from_memory",
                "memory_guard": result.hit.as_meta(result.threshold, result.policy_meta()),
            },
            entry_id=result.hit.entry.id,
            score=result.hit.score,
        )

    async def count_use(self, session: AsyncSession, cached: CachedAnswer) -> None:
        """Count a served answer in the caller's transaction (the one storing its reply)."""
        await self._service.count_use(session, cached.entry_id, cached.score)

    async def learn_cacheable(self, reply: Message) -> None:
        """Learn `reply` now when its intent is listed in EKO_GUARD_CACHEABLE_INTENTS. The list
        is the operator's decision, so these answers follow the scope rule: shared when the
        writer reported no personal context. A refusal is recorded on the reply."""
        intent = (reply.meta or {}).get("intent")
        # No intent (the simple writer sets none): not automatically cacheable.
        if not isinstance(intent, str) or intent not in self._intents:
            return
        outcome = await self.learning.learn_reply(
            reply, validated_by="auto", author=f"intent:{intent}"
        )
        log.info(
            "guard.auto_learn",
            message_id=reply.id,
            learned=outcome.learned is not None,
            refused=outcome.refused,
        )
        if outcome.refused is not None:
            await self.learning.record_refusal(reply, outcome.refused)

    async def rated(
        self, message: Message, *, user_public_id: str, rating: Rating, previous: str | None
    ) -> RatingEffect:
        """What `user_public_id`'s rating of the assistant `message` does to the cache
        (`previous`: their rating before this one, if any)."""
        if message.type == CACHED_RESPONSE:
            entry_id = ((message.meta or {}).get("memory_guard") or {}).get("entry_id")
            if entry_id and previous != rating:
                await self._service.record_feedback(entry_id, rating=rating, previous=previous)
            return RatingEffect(entry_id=entry_id)
        if rating == "up":
            outcome = await self.learning.learn_feedback(message, user_public_id=user_public_id)
            learned = outcome.learned
            return RatingEffect(
                entry_id=learned.entry.id if learned else None,
                learned=bool(learned and learned.created),
                refused=outcome.refused,
            )
        retracted = await self.learning.retract_feedback(message, user_public_id=user_public_id)
        return RatingEffect(
            entry_id=retracted.id if retracted else None, retracted=retracted is not None
        )

    async def forget_reply(self, reply_id: str, *, by: str) -> None:
        """The reply was rejected (regenerated): the entry learned from it, if any, is obsoleted."""
        entry = await self._service.by_source_message(reply_id)
        if entry is not None and entry.status == "active":
            await self._service.mark_obsolete(entry.id, reason="regenerated", by=by)
