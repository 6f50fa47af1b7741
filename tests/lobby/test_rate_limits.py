"""Rate limits are one conditional UPDATE: concurrent triggers cannot exceed them."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta

from eko.lobby import store
from eko.store.db import Database
from tests.lobby.helpers import make_lobby

LIMITS = store.Limits(cooldown_s=1800, cooldown_max_s=8 * 3600, max_per_day=5, answer_window_s=7200)
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


async def test_100_concurrent_triggers_from_two_workers_claim_one_slot(database: Database) -> None:
    room, _ = await make_lobby(database)
    other_worker = Database(database.url)
    try:
        claims = await asyncio.gather(
            *(
                store.claim_slot(
                    database if i % 2 else other_worker, room_id=room.id, now=T0, limits=LIMITS
                )
                for i in range(100)
            )
        )
    finally:
        await other_worker.dispose()
    assert sum(token is not None for token in claims) == 1
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=room.id)
    assert stats is not None and stats.day_count == 1
    assert stats.next_allowed_at == T0 + timedelta(seconds=1800)


async def test_cooldown_and_daily_maximum_hold_over_a_day(database: Database) -> None:
    room, _ = await make_lobby(database)
    granted = []
    # Every 20 minutes for 10 hours (15 cooldown windows), 3 concurrent triggers each time.
    for step in range(30):
        now = T0 + timedelta(minutes=20 * step)
        tokens = await asyncio.gather(
            *(store.claim_slot(database, room_id=room.id, now=now, limits=LIMITS) for _ in range(3))
        )
        granted += [now for token in tokens if token is not None]
    assert len(granted) == 5
    assert all(b - a >= timedelta(minutes=30) for a, b in itertools.pairwise(granted))
    # The next UTC day opens again.
    next_day = T0 + timedelta(days=1)
    assert await store.claim_slot(database, room_id=room.id, now=next_day, limits=LIMITS)


async def test_a_released_slot_is_given_back_and_bypass_ignores_limits(database: Database) -> None:
    room, _ = await make_lobby(database)
    token = await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS)
    assert token is not None
    assert await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS) is None
    assert await store.release_slot(database, room_id=room.id, token=token, now=T0)
    assert not await store.release_slot(database, room_id=room.id, token=token, now=T0)
    again = await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS)
    assert again is not None
    # One slot in flight at a time, even for a manual trigger.
    assert (
        await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS, bypass=True)
        is None
    )
    await store.confirm_slot(database, room_id=room.id, now=T0, goal_id=None, message_id="m")
    # Used: the cooldown refuses a scheduled trigger; a manual one bypasses it.
    assert await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS) is None
    assert await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS, bypass=True)
    # A claim a crashed worker never released stops blocking after a while.
    later = T0 + timedelta(seconds=store.CLAIM_STALE_S + 1)
    assert await store.claim_slot(database, room_id=room.id, now=later, limits=LIMITS, bypass=True)
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=room.id)
    # The manual (bypass) claims are not counted in the day's budget: only `again` is.
    assert stats is not None and stats.day_count == 1


async def test_an_ignored_question_doubles_the_next_cooldown_up_to_the_cap(
    database: Database,
) -> None:
    room, _ = await make_lobby(database)
    now = T0
    cooldowns = []
    for _ in range(6):
        token = await store.claim_slot(database, room_id=room.id, now=now, limits=LIMITS)
        assert token is not None
        await store.confirm_slot(database, room_id=room.id, now=now, goal_id="g", message_id="m")
        async with database.session() as session:
            stats = await store.get_stats(session, room_id=room.id)
        assert stats is not None and stats.next_allowed_at is not None
        cooldowns.append((stats.next_allowed_at - now).total_seconds())
        now = stats.next_allowed_at + timedelta(seconds=LIMITS.answer_window_s)
        assert await store.settle_ignored_question(
            database, room_id=room.id, now=now, limits=LIMITS
        )
        now = now.replace(hour=8) + timedelta(days=1)  # a new day: the daily cap stays out of it
    assert cooldowns == [1800, 3600, 7200, 14400, 28800, 28800]
    # An answered question resets it.
    await store.confirm_slot(database, room_id=room.id, now=now, goal_id="g2", message_id="m2")
    await store.question_answered(database, room_id=room.id, goal_id="g2", now=now, limits=LIMITS)
    later = now + timedelta(days=1)
    assert await store.claim_slot(database, room_id=room.id, now=later, limits=LIMITS)
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=room.id)
    assert stats is not None and stats.next_allowed_at == later + timedelta(seconds=1800)


async def test_a_manual_claim_given_back_leaves_the_days_budget_alone(
    database: Database,
) -> None:
    room, _ = await make_lobby(database)
    scheduled = await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS)
    assert scheduled is not None
    await store.confirm_slot(database, room_id=room.id, now=T0, goal_id=None, message_id="m")
    manual = await store.claim_slot(database, room_id=room.id, now=T0, limits=LIMITS, bypass=True)
    assert manual is not None
    assert await store.release_slot(database, room_id=room.id, token=manual, now=T0, counted=False)
    async with database.session() as session:
        stats = await store.get_stats(session, room_id=room.id)
    assert stats is not None and stats.day_count == 1
