"""What a user message's own transaction does besides storing it: count it against its
sender's free quota and, when it is answered now, record that it is owed an answer — both
happen with the message or not at all (eko.store.messages.append_message's hook)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store import answer_outbox as outbox
from eko.store.models import Message, User


@dataclass(slots=True)
class CountedAndOwed:
    """The hook: `counted` is then the sender as the transaction left it (quota counted; the
    last attempt's when the insert was retried), so the answer need not read them again."""

    owed: bool
    worker_id: str
    lease_s: float
    counted: User | None = None

    async def __call__(self, session: AsyncSession, message: Message) -> None:
        self.counted = await count_quota(session, message)
        if self.owed:
            await outbox.owe(session, message, worker_id=self.worker_id, lease_s=self.lease_s)


async def count_quota(session: AsyncSession, message: Message) -> User | None:
    """Count the message against its sender's free quota; returns the sender as stored now
    (None: no sender, or one gone since)."""
    # The free quota counts a user's messages for life; never reset. One UPDATE (no read
    # first) that returns the whole row, so the answer needs no read of the user either.
    if message.sender_id is None:
        return None
    counted = await session.execute(
        update(User)
        .where(User.id == message.sender_id)
        .values(free_quota_used=User.free_quota_used + 1)
        .returning(User)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    return counted.scalar_one_or_none()
