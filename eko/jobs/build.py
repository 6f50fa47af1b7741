"""Choose and build the jobs backend from the configuration."""

from __future__ import annotations

from eko.config import JobsSettings
from eko.jobs.queue import JobQueue
from eko.jobs.registry import JobRegistry
from eko.jobs.types import JobListener, WorkerOptions
from eko.store.db import Database


def jobs_backend(settings: JobsSettings, database: Database) -> str:
    if settings.jobs_backend != "auto":
        return settings.jobs_backend
    return "local" if database.dialect == "sqlite" else "procrastinate"


def build_job_queue(
    settings: JobsSettings,
    database: Database,
    registry: JobRegistry,
    *,
    listener: JobListener | None = None,
) -> JobQueue:
    worker = WorkerOptions(
        concurrency=settings.jobs_concurrency,
        poll_s=settings.jobs_poll_interval_s,
        stalled_after_s=settings.jobs_stalled_after_s,
        shutdown_grace_s=settings.jobs_shutdown_grace_s,
        model_wait_s=settings.jobs_model_wait_s,
    )
    if jobs_backend(settings, database) == "procrastinate":
        if database.dialect == "sqlite":
            raise ValueError("EKO_JOBS_BACKEND=procrastinate needs a PostgreSQL database")
        from eko.jobs.procrastinate_queue import ProcrastinateJobQueue

        return ProcrastinateJobQueue(
            database.url,
            registry,
            worker=worker,
            listener=listener,
        )
    from eko.jobs.local import LocalJobQueue

    return LocalJobQueue(
        database,
        registry,
        worker=worker,
        burst_on_enqueue=settings.jobs_worker_in_process,
        listener=listener,
    )
