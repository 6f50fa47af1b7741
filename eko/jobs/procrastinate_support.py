"""What the procrastinate backend (procrastinate_queue.py) translates: Eko's database URL
for psycopg, Eko's retry rule as a procrastinate retry strategy, job statuses and rows as
Eko's JobInfo."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

from procrastinate import RetryDecision
from procrastinate.jobs import Job as ProcrastinateJob
from procrastinate.retry import BaseRetryStrategy
from sqlalchemy.engine import make_url

from eko.jobs.backoff import Backoff
from eko.jobs.registry import JobDefinition
from eko.jobs.types import JobEventKind, JobInfo, JobStatus, RetryLater, room_of
from eko.store.models import utcnow

STATUS_TO_PROCRASTINATE: dict[JobStatus, list[str]] = {
    "queued": ["todo"],
    "running": ["doing", "aborting"],
    "succeeded": ["succeeded"],
    "failed": ["failed"],
    "cancelled": ["cancelled", "aborted"],
}
STATUS_FROM_PROCRASTINATE: dict[str, JobStatus] = {
    raw: status for status, raws in STATUS_TO_PROCRASTINATE.items() for raw in raws
}


def libpq_conninfo(database_url: str) -> str:
    """Eko's SQLAlchemy URL (postgresql+asyncpg://…) as a libpq URI for psycopg."""
    url = make_url(database_url).set(drivername="postgresql")
    query = dict(url.query)
    if "ssl" in query and "sslmode" not in query:  # asyncpg spells it `ssl`
        query["sslmode"] = query.pop("ssl")
    return url.set(query=query).render_as_string(hide_password=False)


class EkoRetry(BaseRetryStrategy):
    """RetryLater: again after a backoff, never exhausted. Errors: again with the job's
    backoff until it has run `max_attempts` times."""

    def __init__(self, definition: JobDefinition, *, model_wait_s: float) -> None:
        self._definition = definition
        self._model_wait = Backoff(model_wait_s, definition.backoff.cap_s)

    def decide(self, exception: BaseException, attempts: int) -> tuple[JobEventKind, float | None]:
        """What happens after a run that raised (`attempts` runs before this one)."""
        if isinstance(exception, RetryLater):
            delay = exception.delay_s
            return "deferred", delay if delay is not None else self._model_wait.delay_s(
                attempts + 1
            )
        if attempts + 1 >= self._definition.max_attempts:
            return "failed", None
        return "retrying", self._definition.backoff.delay_s(attempts + 1)

    def get_retry_decision(
        self, *, exception: BaseException, job: ProcrastinateJob
    ) -> RetryDecision | None:
        _kind, delay = self.decide(exception, job.attempts)
        return (
            None if delay is None else RetryDecision(retry_at=utcnow() + timedelta(seconds=delay))
        )


def job_info(job: ProcrastinateJob, *, status: JobStatus) -> JobInfo:
    args = dict(cast(dict[str, Any], job.task_kwargs.get("args") or {}))
    return JobInfo(
        id=int(job.id or 0),
        name=job.task_name,
        status=status,
        args=args,
        room_id=room_of(args),
        attempts=job.attempts,
        priority=job.priority,
        lock=job.lock,
        queueing_lock=job.queueing_lock,
        run_at=job.scheduled_at,
    )


def row_info(row: dict[str, Any]) -> JobInfo:
    args = dict((row.get("args") or {}).get("args") or {})
    return JobInfo(
        id=int(row["id"]),
        name=str(row["task_name"]),
        status=STATUS_FROM_PROCRASTINATE.get(str(row["status"]), "failed"),
        args=args,
        room_id=room_of(args),
        attempts=int(row["attempts"]),
        priority=int(row["priority"]),
        lock=row.get("lock"),
        queueing_lock=row.get("queueing_lock"),
        run_at=row.get("scheduled_at"),
    )
