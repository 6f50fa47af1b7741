"""The PostgreSQL jobs backend: procrastinate (LISTEN/NOTIFY wake-ups, per-key locks,
queueing locks, periodic tasks deferred once per window across workers). Why this queue:
docs/deploy.md.

Eko's registry becomes procrastinate tasks: each runs `JobRegistry.execute`, so a job that needs
a model is re-queued (with backoff) while no provider is reachable, as on the local runner.
Differences from the local runner: procrastinate counts a deferral as an attempt (a deferral
never fails a job, but a later error has fewer retries left), and keeps no error text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from procrastinate import App, PsycopgConnector
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Job as ProcrastinateJob
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from eko.jobs.procrastinate_support import (
    STATUS_FROM_PROCRASTINATE,
    STATUS_TO_PROCRASTINATE,
    EkoRetry,
    job_info,
    libpq_conninfo,
    row_info,
)
from eko.jobs.registry import JobDefinition, JobRegistry, Schedule
from eko.jobs.types import JobEventKind, JobInfo, JobListener, JobStatus, WorkerOptions
from eko.store.models import utcnow

log = structlog.get_logger("eko.jobs")

# procrastinate's periodic deferrer skips windows missed for longer than this; Eko wants the
# latest missed window to run once after any downtime, however long.
NEVER_TOO_LATE_S = 10 * 365 * 24 * 3600
STALLED_TASK = "eko.jobs.retry_stalled"
DEFAULT_QUEUE = "default"
# procrastinate's defer, as its own queries.sql calls it (typed for asyncpg's prepare).
DEFER_IN_TRANSACTION = text(
    "SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[ROW("
    "CAST(:queue AS varchar), CAST(:task AS varchar), CAST(:priority AS integer), "
    "CAST(:lock AS text), CAST(NULL AS text), CAST(:args AS jsonb), "
    "CAST(:scheduled_at AS timestamptz))::procrastinate_job_to_defer_v1])) AS id"
)
# A worker that stopped by itself (its database connection failed) starts again after this
# long, doubling while it keeps failing.
_WORKER_RESTART_MIN_S = 1.0
_WORKER_RESTART_MAX_S = 30.0


class ProcrastinateJobQueue:
    backend = "procrastinate"

    def __init__(
        self,
        database_url: str,
        registry: JobRegistry,
        *,
        worker: WorkerOptions = WorkerOptions(),
        pool_max_size: int = 10,
        listener: JobListener | None = None,
        worker_name: str = "eko",
    ) -> None:
        self.registry = registry
        self._options = worker
        self._listener = listener
        self._worker_name = worker_name
        self._app = App(
            connector=PsycopgConnector(
                conninfo=libpq_conninfo(database_url),
                min_size=1,
                max_size=max(pool_max_size, worker.concurrency + 2),
            ),
            periodic_defaults={"max_delay": NEVER_TOO_LATE_S},
        )
        self._strategies: dict[str, EkoRetry] = {}
        for definition in registry.definitions:
            self._register(definition, model_wait_s=worker.model_wait_s)
        for schedule in registry.schedules:
            self._schedule(schedule)
        self._register_stalled_jobs_retry()
        self._opened = False
        self._opening = asyncio.Lock()
        self._worker: asyncio.Task[None] | None = None
        # Jobs this process deferred: drain() waits for these only (other processes' jobs,
        # or a dead worker's, are not this caller's business).
        self._mine: set[int] = set()

    # --- set-up ---------------------------------------------------------------------------

    def _register(self, definition: JobDefinition, *, model_wait_s: float) -> None:
        strategy = EkoRetry(definition, model_wait_s=model_wait_s)
        self._strategies[definition.name] = strategy
        registry = self.registry

        async def run(context: Any, args: dict[str, Any] | None = None, **extra: Any) -> None:
            job: ProcrastinateJob = context.job
            payload = dict(args or {})
            if "timestamp" in extra:  # a periodic window
                window = datetime.fromtimestamp(int(extra["timestamp"]), UTC)
                payload["window"] = window.isoformat()
            info = job_info(job, status="running")
            await self._notify("started", info)
            try:
                await registry.execute(definition.name, payload)
            except BaseException as exc:
                if isinstance(exc, Exception):
                    kind, _delay = strategy.decide(exc, job.attempts)
                    await self._notify(kind, info)
                    if kind == "failed":
                        log.exception("jobs.failed", job=definition.name, job_id=job.id)
                raise
            await self._notify("succeeded", info)

        self._app.task(name=definition.name, pass_context=True, retry=strategy)(run)

    def _schedule(self, schedule: Schedule) -> None:
        self._app.periodic(
            cron=schedule.cron,
            periodic_id=schedule.name,
            queueing_lock=f"periodic:{schedule.name}",
            task_kwargs={"args": dict(schedule.args or {})},
        )(self._app.tasks[schedule.job])

    def _register_stalled_jobs_retry(self) -> None:
        """A worker killed mid-job leaves it "doing": every 10 s, jobs of workers whose
        heartbeat stopped go back to the queue (procrastinate's documented recipe)."""
        manager = self._app.job_manager
        seconds = self._options.stalled_after_s

        async def retry_stalled(timestamp: int) -> None:
            for job in await manager.get_stalled_jobs(seconds_since_heartbeat=seconds):
                log.warning("jobs.requeued_stalled", job=job.task_name, job_id=job.id)
                await manager.retry_job(job)

        task = self._app.task(name=STALLED_TASK, queueing_lock=STALLED_TASK)(retry_stalled)
        self._app.periodic(cron="* * * * * */10", periodic_id=STALLED_TASK)(task)

    async def _open(self) -> None:
        async with self._opening:
            if not self._opened:
                await self._app.open_async()
                self._opened = True

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
        self.registry.get(name)  # unknown names fail here, not in a worker
        await self._open()
        deferrer = self._app.configure_task(
            name,
            lock=lock,
            queueing_lock=queueing_lock,
            priority=priority,
            schedule_in={"seconds": delay_s} if delay_s > 0 else None,
        )
        try:
            job_id = int(await deferrer.defer_async(args=args))
        except AlreadyEnqueued:
            log.debug("jobs.already_queued", job=name, queueing_lock=queueing_lock)
            return None
        self._mine.add(job_id)
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
        # procrastinate's own defer function, called on the caller's connection: the job is
        # part of its transaction (procrastinate's tables live in Eko's database). The task
        # takes its arguments as `args=` (see _register), as `enqueue` defers them.
        self.registry.get(name)
        job_id = (
            await session.execute(
                DEFER_IN_TRANSACTION,
                {
                    "queue": DEFAULT_QUEUE,
                    "task": name,
                    "priority": priority,
                    "lock": lock,
                    "args": json.dumps({"args": args}),
                    "scheduled_at": (
                        datetime.now(UTC) + timedelta(seconds=delay_s) if delay_s > 0 else None
                    ),
                },
            )
        ).scalar_one()
        self._mine.add(int(job_id))
        return int(job_id)

    def wake(self) -> None:
        """Nothing to do: procrastinate's workers hear of new jobs through NOTIFY."""

    # --- running --------------------------------------------------------------------------

    def _worker_options(self, *, wait: bool) -> dict[str, Any]:
        return {
            "wait": wait,
            "concurrency": self._options.concurrency,
            "name": self._worker_name,
            "install_signal_handlers": False,
            "fetch_job_polling_interval": self._options.poll_s,
            "abort_job_polling_interval": max(self._options.poll_s, 5.0),
            "shutdown_graceful_timeout": self._options.shutdown_grace_s,
            "update_heartbeat_interval": max(1.0, self._options.stalled_after_s / 3),
            "stalled_worker_timeout": self._options.stalled_after_s,
        }

    async def start(self) -> None:
        await self._open()
        if self._worker is None:
            self._worker = asyncio.create_task(
                self._supervised_worker(), name="jobs:procrastinate-worker"
            )

    async def _supervised_worker(self) -> None:
        """procrastinate's worker, started again whenever it stops by itself: it stops when
        its LISTEN connection or heartbeat fails (PostgreSQL restarting), and a worker process
        must outlive that outage instead of idling on. Only cancelling stops it for good."""
        delay = _WORKER_RESTART_MIN_S
        while True:
            began = time.monotonic()
            try:
                await self._app.run_worker_async(**self._worker_options(wait=True))
                log.warning("jobs.worker_stopped", restart_in_s=delay)
            except Exception as exc:
                log.warning("jobs.worker_failed", error=type(exc).__name__, restart_in_s=delay)
            await asyncio.sleep(delay)
            # Back off while it keeps failing; a worker that ran a while starts from the minimum.
            ran_long = time.monotonic() - began > _WORKER_RESTART_MAX_S
            delay = _WORKER_RESTART_MIN_S if ran_long else min(delay * 2, _WORKER_RESTART_MAX_S)

    async def run_forever(self) -> None:
        """`eko worker`: run until cancelled (SIGINT/SIGTERM handled by the caller)."""
        await self.start()
        assert self._worker is not None
        await self._worker

    async def drain(self) -> None:
        await self._open()
        for _ in range(100):
            pending = await self._pending_mine()
            if not pending:
                return
            if self._worker is None:
                # No worker in this process: run one until the queue is caught up. It stops
                # fetching once the queue is empty and then waits for the jobs it runs — to
                # their end: with the grace of a shutdown it cancelled a long one (an import's
                # indexing, 10 s into 700 turns) and left it to a retry after the drain.
                options = self._worker_options(wait=False)
                options["shutdown_graceful_timeout"] = None
                await self._app.run_worker_async(**options)
            else:
                await asyncio.sleep(0.05)

    async def _pending_mine(self) -> list[int]:
        """Jobs this process deferred that are running or due now; finished ones are
        forgotten, those scheduled later are kept (not due yet: not pending)."""
        if not self._mine:
            return []
        rows = await self._app.connector.execute_query_all_async(
            "SELECT id, status::text AS status, "
            "(scheduled_at IS NULL OR scheduled_at <= now()) AS due "
            "FROM procrastinate_jobs WHERE id = ANY(%(ids)s)",
            ids=list(self._mine),
        )
        pending: list[int] = []
        unfinished: set[int] = set()
        for row in rows:
            job_id, status = int(row["id"]), str(row["status"])
            if status in ("doing", "aborting") or (status == "todo" and row["due"]):
                pending.append(job_id)
            if status in ("todo", "doing", "aborting"):
                unfinished.add(job_id)
        self._mine &= unfinished
        return pending

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()  # procrastinate stops gracefully (shutdown_graceful_timeout)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._worker
            self._worker = None
        if self._opened:
            await self._app.close_async()
            self._opened = False

    async def _notify(self, kind: JobEventKind, info: JobInfo) -> None:
        if self._listener is None:
            return
        try:
            await self._listener(kind, info)
        except Exception:  # progress events are best effort
            log.exception("jobs.listener_failed", kind=kind, job_id=info.id)

    # --- inspecting -----------------------------------------------------------------------

    async def list_jobs(
        self,
        *,
        status: JobStatus | None = None,
        room_ids: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[JobInfo]:
        await self._open()
        rows = await self._app.connector.execute_query_all_async(
            "SELECT id, task_name, status::text AS status, args, lock, queueing_lock, "
            "priority, attempts, scheduled_at FROM procrastinate_jobs "
            "WHERE task_name <> %(internal)s "
            "AND (%(statuses)s::text[] IS NULL OR status::text = ANY(%(statuses)s)) "
            "AND (%(rooms)s::text[] IS NULL OR args->'args'->>'room_id' = ANY(%(rooms)s)) "
            "ORDER BY id DESC LIMIT %(limit)s",
            internal=STALLED_TASK,
            statuses=STATUS_TO_PROCRASTINATE[status] if status else None,
            rooms=list(room_ids) if room_ids is not None else None,
            limit=limit,
        )
        return [row_info(row) for row in rows]

    async def get(self, job_id: int) -> JobInfo | None:
        await self._open()
        rows = await self._app.connector.execute_query_all_async(
            "SELECT id, task_name, status::text AS status, args, lock, queueing_lock, "
            "priority, attempts, scheduled_at FROM procrastinate_jobs WHERE id = %(id)s",
            id=job_id,
        )
        return row_info(rows[0]) if rows else None

    async def retry(self, job_id: int) -> bool:
        job = await self.get(job_id)
        if job is None or job.status != "failed":
            return False
        await self._app.job_manager.retry_job_by_id_async(job_id, retry_at=utcnow())
        self._mine.add(job_id)
        return True

    async def cancel(self, job_id: int) -> bool:
        await self._open()
        return await self._app.job_manager.cancel_job_by_id_async(job_id)

    async def counts(self) -> dict[str, int]:
        await self._open()
        rows = await self._app.connector.execute_query_all_async(
            "SELECT status::text AS status, count(*) AS n FROM procrastinate_jobs "
            "WHERE task_name <> %(internal)s GROUP BY status",
            internal=STALLED_TASK,
        )
        counts: dict[str, int] = {}
        for row in rows:
            status = STATUS_FROM_PROCRASTINATE.get(str(row["status"]), "failed")
            counts[status] = counts.get(status, 0) + int(row["n"])
        return counts

    async def prune(self, keep: timedelta) -> int:
        """Delete succeeded/cancelled jobs finished more than `keep` ago (failed: twice as
        long). Returns how many."""
        await self._open()
        rows = await self._app.connector.execute_query_all_async(
            "WITH finished AS ("
            " SELECT job.id, job.status, max(event.at) AS latest_at"
            " FROM procrastinate_jobs job JOIN procrastinate_events event"
            " ON job.id = event.job_id"
            " WHERE job.status IN ('succeeded', 'cancelled', 'aborted', 'failed')"
            " GROUP BY job.id, job.status)"
            " DELETE FROM procrastinate_jobs WHERE id IN ("
            " SELECT id FROM finished WHERE latest_at < now() - make_interval(secs => "
            " CASE WHEN status = 'failed' THEN 2 * %(keep)s ELSE %(keep)s END))"
            " RETURNING id",
            keep=keep.total_seconds(),
        )
        return len(rows)

    @property
    def app(self) -> App:
        """procrastinate's App (tests and `eko worker` diagnostics)."""
        return self._app
