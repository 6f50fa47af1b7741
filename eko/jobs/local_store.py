"""The in-process runner's reads and writes on the `jobs` table, each in its own short
transaction (a job's code never runs inside one)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import and_, delete, exists, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

from eko.jobs.types import JobInfo, JobStatus, room_of
from eko.store.db import Database
from eko.store.jobs_models import Job
from eko.store.models import utcnow

ERROR_MAX_CHARS = 2000


def info(job: Job) -> JobInfo:
    return JobInfo(
        id=job.id,
        name=job.name,
        status=cast(JobStatus, job.status),
        args=dict(job.args or {}),
        room_id=job.room_id,
        attempts=job.attempts,
        priority=job.priority,
        lock=job.lock,
        queueing_lock=job.queueing_lock,
        run_at=job.run_at,
        error=job.last_error,
    )


def new_job(
    *,
    name: str,
    args: dict[str, Any],
    lock: str | None,
    queueing_lock: str | None,
    priority: int,
    max_attempts: int,
    run_at: datetime,
) -> Job:
    return Job(
        name=name,
        args=args,
        status="queued",
        priority=priority,
        lock=lock,
        queueing_lock=queueing_lock,
        room_id=room_of(args),
        attempts=0,
        deferrals=0,
        max_attempts=max_attempts,
        run_at=run_at,
        created_at=utcnow(),
    )


async def insert(
    database: Database,
    *,
    name: str,
    args: dict[str, Any],
    lock: str | None,
    queueing_lock: str | None,
    priority: int,
    max_attempts: int,
    run_at: datetime,
) -> int | None:
    """The new job's id, or None when its queueing lock already has a queued job."""
    try:
        async with database.session() as session:
            job = new_job(
                name=name,
                args=args,
                lock=lock,
                queueing_lock=queueing_lock,
                priority=priority,
                max_attempts=max_attempts,
                run_at=run_at,
            )
            session.add(job)
            await session.flush()
            return job.id
    except IntegrityError:
        if queueing_lock is None:
            raise
        return None


def _claimable(now: datetime) -> Any:
    """Due queued jobs whose lock is free: no running job holds it, and no queued job with the
    same lock comes first (higher priority, or same priority and older) — procrastinate's rule,
    so jobs of one room run in the order they were enqueued."""
    other = aliased(Job)
    blocked = exists().where(
        Job.lock.is_not(None),
        other.lock == Job.lock,
        or_(
            other.status == "running",
            and_(
                other.status == "queued",
                or_(
                    other.priority > Job.priority,
                    and_(other.priority == Job.priority, other.id < Job.id),
                ),
            ),
        ),
    )
    return (
        select(Job.id)
        .where(Job.status == "queued", Job.run_at <= now, ~blocked)
        .order_by(Job.priority.desc(), Job.id)
        .limit(8)
    )


async def claim(database: Database, *, worker_id: str) -> Job | None:
    """Mark the next claimable job running (an attempt starts) and return it."""
    now = utcnow()
    async with database.session() as session:
        candidates = list((await session.execute(_claimable(now))).scalars())
        for job_id in candidates:
            claimed = await session.execute(
                update(Job)
                .where(Job.id == job_id, Job.status == "queued")
                .values(
                    status="running",
                    attempts=Job.attempts + 1,
                    worker_id=worker_id,
                    started_at=now,
                    heartbeat_at=now,
                )
                .execution_options(synchronize_session=False)
            )
            if _rowcount(claimed) == 1:
                return await session.get(Job, job_id, populate_existing=True)
    return None


async def next_due_at(database: Database) -> datetime | None:
    """When the earliest queued job becomes due (the runner sleeps until then at most)."""
    async with database.session() as session:
        value: datetime | None = (
            await session.execute(select(func.min(Job.run_at)).where(Job.status == "queued"))
        ).scalar()
        return value


async def finish(database: Database, job_id: int, *, status: JobStatus, error: str | None) -> None:
    async with database.session() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "running")
            .values(
                status=status,
                finished_at=utcnow(),
                worker_id=None,
                last_error=_clip(error),
            )
        )


async def requeue(
    database: Database,
    job_id: int,
    *,
    run_at: datetime,
    error: str | None,
    deferred: bool = False,
    interrupted: bool = False,
) -> None:
    """A running job goes back to the queue, due at `run_at`. `deferred`: it asked to run
    later (RetryLater), `interrupted`: shutdown stopped it; neither counts as an attempt."""
    values: dict[str, Any] = {
        "status": "queued",
        "run_at": run_at,
        "worker_id": None,
        "heartbeat_at": None,
        "last_error": _clip(error),
    }
    if deferred or interrupted:
        values["attempts"] = Job.attempts - 1  # claim() counted it
    if deferred:
        values["deferrals"] = Job.deferrals + 1
    async with database.session() as session:
        await session.execute(
            update(Job).where(Job.id == job_id, Job.status == "running").values(**values)
        )


async def heartbeat(database: Database, job_ids: Sequence[int]) -> None:
    if not job_ids:
        return
    async with database.session() as session:
        await session.execute(
            update(Job)
            .where(Job.id.in_(list(job_ids)), Job.status == "running")
            .values(heartbeat_at=utcnow())
        )


async def requeue_stalled(database: Database, *, stalled_after_s: float) -> list[int]:
    """Running jobs whose runner stopped beating (a killed process) go back to the queue, due
    now; those out of attempts are marked failed. Returns the re-queued ids."""
    cutoff = utcnow() - timedelta(seconds=stalled_after_s)
    async with database.session() as session:
        stalled = list(
            (
                await session.execute(
                    select(Job).where(
                        Job.status == "running",
                        or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < cutoff),
                    )
                )
            ).scalars()
        )
        requeued: list[int] = []
        for job in stalled:
            exhausted = job.attempts >= job.max_attempts
            job.status = "failed" if exhausted else "queued"
            job.worker_id = None
            job.heartbeat_at = None
            job.last_error = "the runner stopped while the job was running"
            if exhausted:
                job.finished_at = utcnow()
            else:
                job.run_at = utcnow()
                requeued.append(job.id)
        return requeued


async def get(database: Database, job_id: int) -> JobInfo | None:
    async with database.session() as session:
        job = await session.get(Job, job_id)
        return info(job) if job is not None else None


async def list_jobs(
    database: Database,
    *,
    status: JobStatus | None,
    room_ids: Sequence[str] | None,
    limit: int,
) -> list[JobInfo]:
    query = select(Job).order_by(Job.id.desc()).limit(limit)
    if status is not None:
        query = query.where(Job.status == status)
    if room_ids is not None:
        query = query.where(Job.room_id.in_(list(room_ids)))
    async with database.session() as session:
        return [info(job) for job in (await session.execute(query)).scalars()]


async def retry(database: Database, job_id: int) -> bool:
    async with database.session() as session:
        result = await session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "failed")
            .values(status="queued", run_at=utcnow(), finished_at=None, attempts=0)
        )
        return _rowcount(result) == 1


async def cancel(database: Database, job_id: int) -> bool:
    async with database.session() as session:
        result = await session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == "queued")
            .values(status="cancelled", finished_at=utcnow())
        )
        return _rowcount(result) == 1


async def counts(database: Database) -> dict[str, int]:
    async with database.session() as session:
        rows = (await session.execute(select(Job.status, func.count()).group_by(Job.status))).all()
    return {str(status): int(count) for status, count in rows}


async def prune_finished(database: Database, *, keep: timedelta) -> int:
    """Delete succeeded and cancelled jobs finished more than `keep` ago; failed ones stay
    twice as long (someone may still want to retry them)."""
    now = utcnow()
    async with database.session() as session:
        result = await session.execute(
            delete(Job).where(
                or_(
                    and_(Job.status.in_(["succeeded", "cancelled"]), Job.finished_at < now - keep),
                    and_(Job.status == "failed", Job.finished_at < now - 2 * keep),
                )
            )
        )
        return _rowcount(result)


def _rowcount(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)


def _clip(error: str | None) -> str | None:
    return error[:ERROR_MAX_CHARS] if error else error
