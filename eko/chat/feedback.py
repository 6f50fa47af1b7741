"""A user's rating of an assistant message: stored on the message, and fed to the memory guard.

What a rating does to the cache is the guard's rule (eko.guard.conversation.ConversationGuard
.rated): thumbs up on a model's answer validates it for that user alone, thumbs down takes back
the entry their own thumbs up created, and ratings of a cached answer are counted on its entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from eko.guard.conversation import ConversationGuard, Rating, RatingEffect
from eko.store.db import Database
from eko.store.models import Message, User, utcnow


class NotAnAnswer(ValueError):
    """Feedback goes on assistant messages only."""


@dataclass(frozen=True, slots=True)
class FeedbackOutcome:
    message: Message
    rating: Rating
    guard: RatingEffect  # what the rating did to the memory guard


class FeedbackService:
    def __init__(self, *, database: Database, guard: ConversationGuard) -> None:
        self._database = database
        self._guard = guard

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
        effect = await self._guard.rated(
            message, user_public_id=user.public_id, rating=rating, previous=previous
        )
        return FeedbackOutcome(message, rating, effect)
