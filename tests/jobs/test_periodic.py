"""Periodic schedules: one run per window across runners; missed windows collapse into one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from eko.jobs.periodic import PeriodicScheduler, latest_window
from eko.jobs.registry import JobRegistry, Schedule
from eko.store.db import Database

HOURLY = "0 * * * *"


def test_latest_window_is_the_most_recent_start_at_or_before_now() -> None:
    at = datetime(2026, 5, 1, 10, 30, tzinfo=UTC)
    assert latest_window(HOURLY, at) == datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    on_the_hour = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    assert latest_window(HOURLY, on_the_hour) == on_the_hour


async def test_each_window_is_enqueued_once_across_runners(database: Database) -> None:
    enqueued: list[tuple[str, dict[str, Any]]] = []

    async def enqueue(name: str, args: dict[str, Any], **_options: Any) -> int:
        enqueued.append((name, args))
        return len(enqueued)

    schedule = Schedule(name="prune", job="maintenance.prune", cron=HOURLY)
    runners = [PeriodicScheduler(database, [schedule], enqueue) for _ in range(3)]
    at = datetime(2026, 5, 1, 10, 30, tzinfo=UTC)
    for runner in runners:
        await runner.tick(at)
        await runner.tick(at + timedelta(minutes=10))  # same window
    assert enqueued == [("maintenance.prune", {"window": "2026-05-01T10:00:00+00:00"})]

    for runner in runners:
        await runner.tick(at + timedelta(hours=1))
    assert len(enqueued) == 2


async def test_windows_missed_during_downtime_run_once(database: Database) -> None:
    enqueued: list[dict[str, Any]] = []

    async def enqueue(_name: str, args: dict[str, Any], **_options: Any) -> int:
        enqueued.append(args)
        return len(enqueued)

    schedule = Schedule(name="prune", job="maintenance.prune", cron=HOURLY)
    before = PeriodicScheduler(database, [schedule], enqueue)
    await before.tick(datetime(2026, 5, 1, 10, 30, tzinfo=UTC))
    # Down for a day and a half: 36 windows missed; a new process starts.
    after = PeriodicScheduler(database, [schedule], enqueue)
    await after.tick(datetime(2026, 5, 2, 22, 5, tzinfo=UTC))
    await after.tick(datetime(2026, 5, 2, 22, 6, tzinfo=UTC))
    assert [a["window"] for a in enqueued] == [
        "2026-05-01T10:00:00+00:00",
        "2026-05-02T22:00:00+00:00",
    ]


def test_a_bad_cron_expression_is_refused() -> None:
    registry = JobRegistry()
    try:
        registry.every("bad", job="x", cron="every tuesday")
    except ValueError as exc:
        assert "invalid cron" in str(exc)
    else:
        raise AssertionError("accepted an invalid cron expression")
