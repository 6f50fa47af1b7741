"""Periodic schedules for the in-process runner: each schedule's latest cron window is
enqueued once, across any number of runners sharing the database (a conditional update on
`job_schedules` decides who enqueues). Windows missed while nothing ran collapse into one: at
start only the latest window is due, so a night of downtime runs a job once, not N times."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import structlog
from croniter import croniter
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from eko.jobs.registry import Schedule
from eko.store.db import Database
from eko.store.jobs_models import JobSchedule
from eko.store.models import utcnow

log = structlog.get_logger("eko.jobs")

Enqueue = Callable[..., Awaitable[int | None]]


def latest_window(cron: str, now: datetime) -> datetime:
    """The start of the most recent window at or before `now`."""
    nxt: datetime = croniter(cron, now).get_next(datetime)
    prev: datetime = croniter(cron, nxt).get_prev(datetime)
    return prev if prev <= now else croniter(cron, now).get_prev(datetime)


def next_window(cron: str, now: datetime) -> datetime:
    window: datetime = croniter(cron, now).get_next(datetime)
    return window


async def claim_window(database: Database, name: str, window: datetime) -> bool:
    """True for exactly one caller per (schedule, window): it enqueues that window's job."""
    async with database.session() as session:
        result: Any = await session.execute(
            update(JobSchedule)
            .where(JobSchedule.name == name, JobSchedule.last_window < window)
            .values(last_window=window, updated_at=utcnow())
        )
        if int(result.rowcount or 0) == 1:
            return True
        if await session.get(JobSchedule, name) is not None:
            return False  # this window (or a later one) was claimed already
    try:
        async with database.session() as session:
            session.add(JobSchedule(name=name, last_window=window, updated_at=utcnow()))
    except IntegrityError:
        return False  # another runner created the row first, for this window
    return True


class PeriodicScheduler:
    def __init__(self, database: Database, schedules: list[Schedule], enqueue: Enqueue) -> None:
        self._database = database
        self._schedules = schedules
        self._enqueue = enqueue
        # The latest window this process knows to be claimed, per schedule: the database is
        # asked only when a new window starts.
        self._seen: dict[str, datetime] = {}

    async def tick(self, now: datetime | None = None) -> list[str]:
        """Enqueue every schedule whose latest window has not run yet; returns their names."""
        now = now or utcnow()
        enqueued: list[str] = []
        for schedule in self._schedules:
            window = latest_window(schedule.cron, now)
            if self._seen.get(schedule.name) == window:
                continue
            if await claim_window(self._database, schedule.name, window):
                args = {**(schedule.args or {}), "window": window.isoformat()}
                await self._enqueue(schedule.job, args, queueing_lock=f"periodic:{schedule.name}")
                enqueued.append(schedule.name)
                log.info("jobs.periodic.enqueued", schedule=schedule.name, window=str(window))
            self._seen[schedule.name] = window
        return enqueued

    def seconds_to_next(self, now: datetime | None = None) -> float | None:
        if not self._schedules:
            return None
        now = now or utcnow()
        soonest = min(next_window(s.cron, now) for s in self._schedules)
        return max(0.0, (soonest - now).total_seconds())
