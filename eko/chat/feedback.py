"""A user's rating of an assistant message: stored on the message, and fed to the memory guard.

Thumbs up on a model's answer validates it for that user alone: it becomes an entry of their
private scope (eko.chat.memory_guard.GuardLearning.learn_feedback), and a vote towards the shared
scope when agreement is configured. Thumbs down from a user takes back the entry their own thumbs
up created. Ratings of a cached answer are counted on its entry, for staff to audit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select

from eko.chat.memory_guard import GuardLearning
from eko.guard.service import GuardService
from eko.store.db import Database
from eko.store.models import Message, User, utcnow

Rating = Literal["up", "down"]


class NotAnAnswer(ValueError):
    """Feedback goes on assistant messages only."""


@dataclass(frozen=True, slots=True)
class FeedbackOutcome:
    message: Message
    rating: Rating
    entry_id: str | None = None  # the cache entry learned from (or rated through) this message
    learned: bool = False  # a new entry was created by this feedback
    refused: str | None = None  # why a thumbs up did not become an entry
    retracted: bool = False  # a thumbs down took back the entry this user's thumbs up created


class FeedbackService:
    def __init__(self, *, database: Database, guard: GuardService, learning: GuardLearning) -> None:
        self._database = database
        self._guard = guard
        # Public: staff validation (the API) learns messages through the same rule.
        self.learning = learning

    async def rate(
        self, *, message_id: str, user: User, rating: Rating, comment: str | None = None
    ) -> FeedbackOutcome:
        """Record `user`'s rating (one per user per message: a new one replaces the old).

        The caller checks that the user may see the message's room.
        """
        async with self._database.session() as session:
            message = (
                await session.execute(
                    select(Message).where(Message.id == message_id).with_for_update()
                )
            ).scalar_one_or_none()
            if message is None:
                raise LookupError(message_id)
            if message.role != "assistant":
                raise NotAnAnswer("feedback goes on assistant messages only")
            meta = dict(message.meta or {})
            ratings = dict(meta.get("feedback") or {})
            previous = (ratings.get(user.public_id) or {}).get("rating")
            ratings[user.public_id] = {
                "rating": rating,
                "comment": comment,
                "at": utcnow().isoformat(),
            }
            message.meta = {**meta, "feedback": ratings}
        if message.type == "cached_response":
            entry_id = (message.meta.get("memory_guard") or {}).get("entry_id")
            if entry_id and previous != rating:
                await self._guard.record_feedback(entry_id, rating=rating, previous=previous)
            return FeedbackOutcome(message, rating, entry_id=entry_id)
        if rating == "up":
            outcome = await self.learning.learn_feedback(message, user_public_id=user.public_id)
            learned = outcome.learned
            return FeedbackOutcome(
                message,
                rating,
                entry_id=learned.entry.id if learned else None,
                learned=bool(learned and learned.created),
                refused=outcome.refused,
            )
        retracted = await self.learning.retract_feedback(message, user_public_id=user.public_id)
        return FeedbackOutcome(
            message,
            rating,
            entry_id=retracted.id if retracted else None,
            retracted=retracted is not None,
        )
