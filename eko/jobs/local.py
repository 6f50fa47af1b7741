"""The in-process job runner (the embedded default): jobs are rows of the `jobs` table, run by
asyncio tasks of this process, so a restart resumes whatever was pending.

Two ways to run: `start()` runs a loop until `aclose()` (due jobs, retries when they fall due,
periodic schedules, re-queueing jobs of a runner that died); without it, each `enqueue()` runs
a burst that works until nothing is due — what a one-off command (`eko chat`) needs, with no
task left behind. Either way, `drain()` runs everything due now and returns.

Safe for one process per database, plus one-off commands: claims are atomic, but the
one-job-per-lock rule is checked by the claiming process (PostgreSQL deployments with several
workers use procrastinate, eko/jobs/procrastinate_queue.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.jobs import local_store as store
from eko.jobs.backoff import Backoff
from eko.jobs.periodic import PeriodicScheduler
from eko.jobs.registry import JobRegistry, UnknownJob
from eko.jobs.types import (
    JobEventKind,
    JobInfo,
    JobListener,
    JobStatus,
    RetryLater,
    WorkerOptions,
)
from eko.store.db import Database
from eko.store.jobs_models import Job
from eko.store.models import utcnow

log = structlog.get_logger("eko.jobs")


class LocalJobQueue:
    backend = "local"

    def __init__(
        self,
        database: Database,
        registry: JobRegistry,
        *,
        worker: WorkerOptions = WorkerOptions(),
        heartbeat_s: float = 5.0,
        burst_on_enqueue: bool = True,
        listener: JobListener | None = None,
    ) -> None:
        self.registry = registry
        self._database = database
        self._options = worker
        self._heartbeat_s = heartbeat_s
        self._burst_on_enqueue = burst_on_enqueue
        self._listener = listener
        self.worker_id = uuid.uuid4().hex
        self._running: dict[int, asyncio.Task[None]] = {}
        self._claiming = asyncio.Lock()
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._burst: asyncio.Task[None] | None = None
        self._closing = False
        self._scheduler = PeriodicScheduler(database, registry.schedules, self.enqueue)

    # --- enqueueing -----------------------------------------------------------------------

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
        definition = self.registry.get(name)  # unknown names fail here, not in a worker
        job_id = await store.insert(
            self._database,
            name=name,
            args=args,
            lock=lock,
            queueing_lock=queueing_lock,
            priority=priority,
            max_attempts=definition.max_attempts,
            run_at=utcnow() + timedelta(seconds=max(0.0, delay_s)),
        )
        if job_id is None:
            log.debug("jobs.already_queued", job=name, queueing_lock=queueing_lock)
            return None
        self.wake()
        return job_id

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
        definition = self.registry.get(name)
        job = store.new_job(
            name=name,
            args=args,
            lock=lock,
            queueing_lock=None,
            priority=priority,
            max_attempts=definition.max_attempts,
            run_at=utcnow() + timedelta(seconds=max(0.0, delay_s)),
        )
        session.add(job)
        await session.flush()
        return job.id

    def wake(self) -> None:
        self._wake.set()
        if self._loop_task is None and self._burst_on_enqueue and not self._closing:
            self._start_burst()

    def _start_burst(self) -> None:
        if self._burst is None or self._burst.done():
            self._burst = asyncio.create_task(self._run_until_idle(), name="jobs:burst")

    # --- running --------------------------------------------------------------------------

    async def start(self) -> None:
        if self._loop_task is None:
            self._closing = False
            self._loop_task = asyncio.create_task(self._loop(), name="jobs:runner")

    async def _loop(self) -> None:
        last_stalled_check = 0.0
        clock = asyncio.get_running_loop().time
        while not self._closing:
            try:
                if clock() - last_stalled_check >= self._options.stalled_after_s / 2:
                    last_stalled_check = clock()
                    requeued = await store.requeue_stalled(
                        self._database, stalled_after_s=self._options.stalled_after_s
                    )
                    if requeued:
                        log.warning("jobs.requeued_stalled", job_ids=requeued)
                await self._scheduler.tick()
                await self._pump()
                timeout = await self._sleep_budget()
            except Exception:  # the runner must outlive a database hiccup
                log.exception("jobs.runner_error")
                timeout = self._options.poll_s
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=timeout)

    async def _sleep_budget(self) -> float:
        """Until the next due job or periodic window, at most one poll interval (another
        process may enqueue: there is no notification on SQLite)."""
        budget = self._options.poll_s
        due = await store.next_due_at(self._database)
        if due is not None:
            budget = min(budget, max(0.0, (due - utcnow()).total_seconds()))
        periodic = self._scheduler.seconds_to_next()
        if periodic is not None:
            budget = min(budget, periodic + 0.05)
        return max(budget, 0.01)

    async def _pump(self) -> None:
        """Start due jobs up to the concurrency limit."""
        async with self._claiming:
            while len(self._running) < self._options.concurrency and not self._closing:
                job = await store.claim(self._database, worker_id=self.worker_id)
                if job is None:
                    return
                task = asyncio.create_task(self._execute(job), name=f"job:{job.name}:{job.id}")
                self._running[job.id] = task
                task.add_done_callback(functools.partial(self._finished, job.id))

    def _finished(self, job_id: int, _task: object = None) -> None:
        self._running.pop(job_id, None)
        self._wake.set()

    async def _run_until_idle(self) -> None:
        while True:
            await self._pump()
            if not self._running:
                return
            await asyncio.wait(list(self._running.values()), return_when=asyncio.FIRST_COMPLETED)

    async def drain(self) -> None:
        if self._burst is not None:
            await asyncio.gather(self._burst, return_exceptions=True)
        await self._run_until_idle()

    async def _execute(self, job: Job) -> None:
        info = store.info(job)
        beating = asyncio.create_task(self._beat(job.id), name=f"job-heartbeat:{job.id}")
        await self._notify("started", info)
        try:
            await self.registry.execute(job.name, dict(job.args or {}))
        except asyncio.CancelledError:
            # Shutdown: the job goes back to the queue and this run does not count.
            await asyncio.shield(
                store.requeue(self._database, job.id, run_at=utcnow(), error=None, interrupted=True)
            )
            log.info("jobs.interrupted", job=job.name, job_id=job.id)
            raise
        except RetryLater as later:
            await self._retry_later(job, later)
        except UnknownJob:
            await store.finish(
                self._database, job.id, status="failed", error=f"unknown job {job.name!r}"
            )
            log.error("jobs.unknown", job=job.name, job_id=job.id)
        except Exception as exc:
            await self._failed(job, exc)
        else:
            await store.finish(self._database, job.id, status="succeeded", error=None)
            await self._notify("succeeded", info)
        finally:
            beating.cancel()

    async def _retry_later(self, job: Job, later: RetryLater) -> None:
        # Never exhausts the job (an outage must not lose work): backoff on the deferrals.
        delay = later.delay_s
        if delay is None:
            cap = self.registry.get(job.name).backoff.cap_s
            delay = Backoff(self._options.model_wait_s, cap).delay_s(job.deferrals + 1)
        await store.requeue(
            self._database,
            job.id,
            run_at=utcnow() + timedelta(seconds=delay),
            error=f"deferred: {later.reason}",
            deferred=True,
        )
        log.info("jobs.deferred", job=job.name, job_id=job.id, reason=later.reason, delay_s=delay)
        await self._notify("deferred", store.info(job))

    async def _failed(self, job: Job, exc: Exception) -> None:
        error = f"{type(exc).__name__}: {exc}"
        definition = self.registry.get(job.name)
        if job.attempts >= job.max_attempts:
            await store.finish(self._database, job.id, status="failed", error=error)
            log.exception("jobs.failed", job=job.name, job_id=job.id, attempts=job.attempts)
            await self._notify("failed", store.info(job))
            return
        delay = definition.backoff.delay_s(job.attempts)
        await store.requeue(
            self._database, job.id, run_at=utcnow() + timedelta(seconds=delay), error=error
        )
        log.warning(
            "jobs.retrying",
            job=job.name,
            job_id=job.id,
            attempt=job.attempts,
            delay_s=delay,
            error=error,
        )
        await self._notify("retrying", store.info(job))

    async def _beat(self, job_id: int) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s)
            with contextlib.suppress(Exception):
                await store.heartbeat(self._database, [job_id])

    async def _notify(self, kind: JobEventKind, info: JobInfo) -> None:
        if self._listener is None:
            return
        try:
            await self._listener(kind, info)
        except Exception:  # progress events are best effort
            log.exception("jobs.listener_failed", kind=kind, job_id=info.id)

    async def aclose(self) -> None:
        self._closing = True
        self._wake.set()
        if self._loop_task is not None:
            await asyncio.gather(self._loop_task, return_exceptions=True)
            self._loop_task = None
        if self._running:
            _done, pending = await asyncio.wait(
                list(self._running.values()), timeout=self._options.shutdown_grace_s
            )
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if self._burst is not None:
            await asyncio.gather(self._burst, return_exceptions=True)

    # --- inspecting -----------------------------------------------------------------------

    @property
    def running(self) -> int:
        return len(self._running)

    async def list_jobs(
        self,
        *,
        status: JobStatus | None = None,
        room_ids: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[JobInfo]:
        return await store.list_jobs(self._database, status=status, room_ids=room_ids, limit=limit)

    async def get(self, job_id: int) -> JobInfo | None:
        return await store.get(self._database, job_id)

    async def retry(self, job_id: int) -> bool:
        done = await store.retry(self._database, job_id)
        if done:
            self._wake.set()
            if self._loop_task is None and self._burst_on_enqueue:
                self._start_burst()
        return done

    async def cancel(self, job_id: int) -> bool:
        return await store.cancel(self._database, job_id)

    async def prune(self, keep: timedelta) -> int:
        return await store.prune_finished(self._database, keep=keep)

    async def counts(self) -> dict[str, int]:
        return await store.counts(self._database)
