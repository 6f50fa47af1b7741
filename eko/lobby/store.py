"""Repository of the lobby's proactive side: stats, rate limits, reflections, summaries.

The rate limits are one conditional UPDATE of the lobby's `reflection_stats` row, checked by
its rowcount: "no intervention before next_allowed_at, at most N per UTC day". Any number of
concurrent triggers, in any number of processes, get at most one slot per cooldown and at
most N per day, because the database serializes writes to one row. Manual triggers are not
counted in the day's budget (they have their own limit per user: eko.lobby.manual).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary, Reflection, ReflectionStats

# A claimed slot not released nor confirmed within this long belonged to a crashed worker.
CLAIM_STALE_S = 600.0
# The key of a reflection's metadata naming the user who triggered it by hand (public id).
TRIGGERED_BY = "triggered_by"


@dataclass(frozen=True, slots=True)
class Limits:
    cooldown_s: float
    cooldown_max_s: float
    max_per_day: int
    answer_window_s: float


def day_of(now: datetime) -> str:
    return now.date().isoformat()


async def ensure_stats(database: Database, *, room_id: str, now: datetime) -> None:
    """Create the lobby's stats row once (concurrent callers: one insert wins)."""
    async with database.session() as session:
        if await session.get(ReflectionStats, room_id) is not None:
            return
    try:
        async with database.session() as session:
            session.add(_new_stats(room_id, now))
    except IntegrityError:
        pass  # created by a concurrent caller


def _new_stats(room_id: str, now: datetime) -> ReflectionStats:
    return ReflectionStats(
        room_id=room_id,
        total=0,
        pass_count=0,
        message_count=0,
        rate_limited_count=0,
        total_tokens=0,
        model_calls=0,
        day_count=0,
        cooldown_s=0.0,
        updated_at=now,
    )


async def get_stats(session: AsyncSession, *, room_id: str) -> ReflectionStats | None:
    return await session.get(ReflectionStats, room_id)


async def claim_slot(
    database: Database, *, room_id: str, now: datetime, limits: Limits, bypass: bool = False
) -> str | None:
    """Reserve one intervention: a token, or None when the cooldown or the day's maximum forbid
    it, or another reflection of this lobby holds a slot (one at a time per lobby, whatever
    the trigger). `bypass` (a manual trigger) ignores the cooldown and the day's maximum, and
    is not counted in the day's budget of scheduled interventions (its cooldown still
    applies to the next scheduled one)."""
    await ensure_stats(database, room_id=room_id, now=now)
    async with database.session() as session:
        stats = await session.get(ReflectionStats, room_id)
        cooldown = (stats.cooldown_s if stats is not None else 0.0) or limits.cooldown_s
    token = uuid.uuid4().hex
    today = day_of(now)
    table = ReflectionStats
    statement = update(table).where(
        table.room_id == room_id,
        or_(
            table.claim_token.is_(None),
            table.claimed_at.is_(None),
            table.claimed_at < now - timedelta(seconds=CLAIM_STALE_S),
        ),
    )
    if not bypass:
        statement = statement.where(
            or_(table.next_allowed_at.is_(None), table.next_allowed_at <= now),
            or_(table.day.is_(None), table.day != today, table.day_count < limits.max_per_day),
        )
    counted = 0 if bypass else 1
    statement = statement.values(
        day_count=case((table.day == today, table.day_count + counted), else_=counted),
        day=today,
        claim_token=token,
        claim_prev_next_at=table.next_allowed_at,
        claimed_at=now,
        next_allowed_at=now + timedelta(seconds=cooldown),
        updated_at=now,
    )
    async with database.session() as session:
        result: Any = await session.execute(statement)
        return token if int(result.rowcount or 0) == 1 else None


async def release_slot(
    database: Database, *, room_id: str, token: str, now: datetime, counted: bool = True
) -> bool:
    """Give back a claimed slot that was not used (the model passed or failed). `counted`:
    the claim counted in the day's budget (False for a manual trigger's, see claim_slot)."""
    table = ReflectionStats
    uncount = 1 if counted else 0
    async with database.session() as session:
        result: Any = await session.execute(
            update(table)
            .where(table.room_id == room_id, table.claim_token == token)
            .values(
                day_count=case((table.day_count > 0, table.day_count - uncount), else_=0),
                next_allowed_at=table.claim_prev_next_at,
                claim_token=None,
                claim_prev_next_at=None,
                claimed_at=None,
                updated_at=now,
            )
        )
        return int(result.rowcount or 0) == 1


async def confirm_slot(
    database: Database,
    *,
    room_id: str,
    now: datetime,
    goal_id: str | None,
    message_id: str,
) -> None:
    """The slot was used: a message was posted (the question now waits for its answer)."""
    table = ReflectionStats
    async with database.session() as session:
        await session.execute(
            update(table)
            .where(table.room_id == room_id)
            .values(
                last_message_at=now,
                claim_token=None,
                claim_prev_next_at=None,
                claimed_at=None,
                pending_goal_id=goal_id,
                pending_message_id=message_id,
                pending_since=now if goal_id else None,
                updated_at=now,
            )
        )


async def settle_ignored_question(
    database: Database, *, room_id: str, now: datetime, limits: Limits
) -> bool:
    """A question nobody answered within the window doubles the next cooldown (up to the cap).
    True when it did."""
    table = ReflectionStats
    async with database.session() as session:
        stats = await session.get(table, room_id)
        if stats is None or stats.pending_since is None:
            return False
        if now - stats.pending_since < timedelta(seconds=limits.answer_window_s):
            return False
        current = stats.cooldown_s or limits.cooldown_s
        doubled = min(limits.cooldown_max_s, max(current, 1.0) * 2)
        result: Any = await session.execute(
            update(table)
            .where(table.room_id == room_id, table.pending_since == stats.pending_since)
            .values(
                cooldown_s=doubled,
                pending_goal_id=None,
                pending_message_id=None,
                pending_since=None,
                updated_at=now,
            )
        )
        return int(result.rowcount or 0) == 1


async def question_answered(
    database: Database, *, room_id: str, goal_id: str, now: datetime, limits: Limits
) -> None:
    """The pending question was answered: the cooldown goes back to its configured value."""
    table = ReflectionStats
    async with database.session() as session:
        await session.execute(
            update(table)
            .where(table.room_id == room_id, table.pending_goal_id == goal_id)
            .values(
                cooldown_s=limits.cooldown_s,
                pending_goal_id=None,
                pending_message_id=None,
                pending_since=None,
                updated_at=now,
            )
        )


async def record_reflection(database: Database, *, reflection: Reflection, now: datetime) -> None:
    """Store a reflection and add it to the lobby's counters, in one transaction."""
    await ensure_stats(database, room_id=reflection.room_id, now=now)
    table = ReflectionStats
    is_message = reflection.action == "message"
    async with database.session() as session:
        session.add(reflection)
        await session.execute(
            update(table)
            .where(table.room_id == reflection.room_id)
            .values(
                total=table.total + 1,
                pass_count=table.pass_count + (0 if is_message else 1),
                message_count=table.message_count + (1 if is_message else 0),
                rate_limited_count=table.rate_limited_count + (1 if reflection.rate_limited else 0),
                total_tokens=table.total_tokens + reflection.llm_tokens,
                model_calls=table.model_calls + reflection.model_calls,
                updated_at=now,
            )
        )


async def last_manual_reflection(
    session: AsyncSession, *, by: str, since: datetime
) -> datetime | None:
    """When user `by` (public id) last triggered a reflection by hand that went as far as the
    model (not skipped), if that was at `since` or later."""
    result = await session.execute(
        select(Reflection.created_at)
        .where(
            Reflection.trigger == "manual",
            Reflection.created_at >= since,
            Reflection.skipped.is_(None),
            Reflection.meta[TRIGGERED_BY].as_string() == by,
        )
        .order_by(Reflection.created_at.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def history(session: AsyncSession, *, room_id: str, limit: int = 50) -> Sequence[Reflection]:
    result = await session.execute(
        select(Reflection)
        .where(Reflection.room_id == room_id)
        .order_by(Reflection.created_at.desc(), Reflection.id)
        .limit(limit)
    )
    return result.scalars().all()


# --- activity summaries ---


@dataclass(frozen=True, slots=True)
class DayCounts:
    reflections: int
    messages: int
    passes: int
    rate_limited: int
    model_calls: int
    tokens: int


async def day_counts(session: AsyncSession, *, room_id: str, since: datetime) -> DayCounts:
    """The lobby's reflections since `since` (the status bar's counters for today)."""
    row = (
        await session.execute(
            select(
                func.count(Reflection.id),
                func.sum(case((Reflection.action == "message", 1), else_=0)),
                func.sum(case((Reflection.action == "pass", 1), else_=0)),
                func.sum(case((Reflection.rate_limited.is_(True), 1), else_=0)),
                func.sum(Reflection.model_calls),
                func.sum(Reflection.llm_tokens),
            ).where(Reflection.room_id == room_id, Reflection.created_at >= since)
        )
    ).one()
    return DayCounts(*(int(value or 0) for value in row))


async def last_summarized_seq(session: AsyncSession, *, room_id: str) -> int:
    result = await session.execute(
        select(func.max(ActivitySummary.last_seq)).where(ActivitySummary.room_id == room_id)
    )
    return int(result.scalar() or 0)


async def add_summary(database: Database, *, summary: ActivitySummary) -> bool:
    """Store a summary; False when another worker summarized the same messages first."""
    try:
        async with database.session() as session:
            session.add(summary)
    except IntegrityError:
        return False
    return True


async def latest_summary(session: AsyncSession, *, room_id: str) -> ActivitySummary | None:
    result = await session.execute(
        select(ActivitySummary)
        .where(ActivitySummary.room_id == room_id)
        .order_by(ActivitySummary.last_seq.desc())
        .limit(1)
    )
    return result.scalars().first()
