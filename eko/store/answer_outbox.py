"""Reads and writes of the answer outbox (eko/store/outbox_models.py).

`owe` and `settle` run inside the caller's transaction (the user message's, the reply's): that
is the whole guarantee. The lease functions each run their own short transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.models import Message, utcnow
from eko.store.outbox_models import AnswerOutbox

ERROR_MAX_CHARS = 500
# The longest wait between two attempts at an answer that keeps failing.
RETRY_MAX_S = 3600.0


async def owe(session: AsyncSession, message: Message, *, worker_id: str, lease_s: float) -> None:
    """Record, in the message's transaction, that `message` must be answered; the caller
    (`worker_id`) holds the first lease."""
    now = utcnow()
    session.add(
        AnswerOutbox(
            user_message_id=message.id,
            room_id=message.room_id,
            claimed_by=worker_id,
            claimed_until=now + timedelta(seconds=lease_s),
            attempts=1,
            created_at=now,
        )
    )


async def settle(session: AsyncSession, user_message_id: str) -> None:
    """The answer is stored (in this transaction): nothing is owed any more."""
    await session.execute(
        delete(AnswerOutbox)
        .where(AnswerOutbox.user_message_id == user_message_id)
        .execution_options(synchronize_session=False)
    )


async def renew(
    database: Database, *, worker_id: str, user_message_ids: Sequence[str], lease_s: float
) -> int:
    """Extend this worker's leases on the rows it is answering; returns how many it holds."""
    if not user_message_ids:
        return 0
    until = utcnow() + timedelta(seconds=lease_s)
    renewed = 0
    async with database.session() as session:
        for start in range(0, len(user_message_ids), 500):
            chunk = list(user_message_ids[start : start + 500])
            result = await session.execute(
                update(AnswerOutbox)
                .where(
                    AnswerOutbox.claimed_by == worker_id,
                    AnswerOutbox.user_message_id.in_(chunk),
                )
                .values(claimed_until=until)
                .execution_options(synchronize_session=False)
            )
            renewed += int(getattr(result, "rowcount", 0) or 0)
    return renewed


async def release(
    database: Database,
    *,
    user_message_id: str,
    worker_id: str,
    retry_in_s: float,
    error: str | None,
) -> None:
    """This worker gives up for now: anyone may claim the message again after `retry_in_s`,
    doubled for each attempt already made (at most RETRY_MAX_S), so a message whose answer
    keeps failing on a bug is retried ever more rarely, never dropped."""
    async with database.session() as session:
        attempts = (
            await session.execute(
                select(AnswerOutbox.attempts).where(
                    AnswerOutbox.user_message_id == user_message_id,
                    AnswerOutbox.claimed_by == worker_id,
                )
            )
        ).scalar_one_or_none()
        if attempts is None:
            return  # not owed (an answer asked for later), or not ours any more
        delay_s = min(retry_in_s * 2 ** min(max(attempts - 1, 0), 20), RETRY_MAX_S)
        await session.execute(
            update(AnswerOutbox)
            .where(
                AnswerOutbox.user_message_id == user_message_id,
                AnswerOutbox.claimed_by == worker_id,
            )
            .values(
                claimed_by=None,
                claimed_until=utcnow() + timedelta(seconds=delay_s),
                last_error=(error or "")[:ERROR_MAX_CHARS] or None,
            )
            .execution_options(synchronize_session=False)
        )


async def claim_due(
    database: Database,
    *,
    worker_id: str,
    lease_s: float,
    limit: int,
    other_workers_dead: bool = False,
) -> list[str]:
    """Claim up to `limit` rows whose lease ran out, oldest first; returns their user message
    ids. Atomic across processes: SQLite's single writer, PostgreSQL's SKIP LOCKED.
    `other_workers_dead`: every lease not held by `worker_id` is void (a process that knows it
    is the database's only server, just started)."""
    if limit <= 0:
        return []
    now = utcnow()
    expired = (
        or_(AnswerOutbox.claimed_until <= now, AnswerOutbox.claimed_by != worker_id)
        if other_workers_dead
        else AnswerOutbox.claimed_until <= now
    )
    due = (
        select(AnswerOutbox.user_message_id)
        .where(expired)
        .order_by(AnswerOutbox.created_at)
        .limit(limit)
    )
    if database.dialect == "postgresql":
        due = due.with_for_update(skip_locked=True)
    async with database.session() as session:
        result = await session.execute(
            update(AnswerOutbox)
            .where(
                AnswerOutbox.user_message_id.in_(due.scalar_subquery()),
                expired,
            )
            .values(
                claimed_by=worker_id,
                claimed_until=now + timedelta(seconds=lease_s),
                attempts=AnswerOutbox.attempts + 1,
            )
            .returning(AnswerOutbox.user_message_id)
            .execution_options(synchronize_session=False)
        )
        return [row[0] for row in result]
