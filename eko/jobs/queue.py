"""The one interface every piece of background work goes through. Code that enqueues holds a
JobQueue and never knows which backend runs it (in-process runner or procrastinate)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from eko.jobs.registry import JobRegistry
from eko.jobs.types import JobInfo, JobStatus


class JobQueue(Protocol):
    registry: JobRegistry

    @property
    def backend(self) -> str:
        """ "local" or "procrastinate" (for /health, doctor and logs)."""
        ...

    async def enqueue(
        self,
        name: str,
        args: dict[str, Any],
        *,
        lock: str | None = None,
        queueing_lock: str | None = None,
        priority: int = 0,
        delay_s: float = 0.0,
    ) -> int | None:
        """Persist a job; returns its id, or None when `queueing_lock` already has a queued
        job (which will do the same work). `lock`: jobs sharing it run one at a time, in
        order. Higher `priority` runs first."""
        ...

    async def enqueue_in(
        self,
        session: AsyncSession,
        name: str,
        args: dict[str, Any],
        *,
        lock: str | None = None,
        priority: int = 0,
        delay_s: float = 0.0,
    ) -> int:
        """Persist a job inside the caller's transaction (`session`, on Eko's database): the
        job exists if and only if that transaction commits. Call `wake()` after the commit.
        No queueing lock here: a conflict would abort the caller's transaction. `delay_s`:
        not run before that many seconds have passed."""
        ...

    def wake(self) -> None:
        """Jobs were committed by `enqueue_in`: look at the queue now."""
        ...

    async def start(self) -> None:
        """Run jobs in this process until aclose(): due jobs, retries, periodic schedules."""
        ...

    async def drain(self) -> None:
        """Run (or wait for) every job that is due now, and the jobs they enqueue; jobs
        scheduled later (backoff, waiting for a model) stay queued."""
        ...

    async def aclose(self) -> None:
        """Stop: running jobs get a grace period, then go back to the queue."""
        ...

    async def list_jobs(
        self,
        *,
        status: JobStatus | None = None,
        room_ids: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[JobInfo]:
        """Most recent first; `room_ids` keeps only jobs working for those rooms."""
        ...

    async def get(self, job_id: int) -> JobInfo | None: ...

    async def retry(self, job_id: int) -> bool:
        """A failed job goes back to the queue, due now, with its attempts reset. False if not
        found or in another state."""
        ...

    async def cancel(self, job_id: int) -> bool:
        """A queued job is cancelled (never runs). False if not found or not queued."""
        ...

    async def counts(self) -> dict[str, int]:
        """Jobs per status (for /health and `eko jobs list`)."""
        ...

    async def prune(self, keep: timedelta) -> int:
        """Delete jobs finished more than `keep` ago (failed ones: twice as long)."""
        ...
