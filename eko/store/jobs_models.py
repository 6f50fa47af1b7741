"""Tables of the in-process job runner (eko/jobs/local.py): pending and finished jobs, and the
last window each periodic schedule ran for.

They exist on both backends (one migration chain); on PostgreSQL the default runner is
procrastinate, whose own tables are applied by the same migration
(eko/store/procrastinate_schema.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from eko.store.models import Base, BigId, utcnow

# queued -> running -> succeeded | failed; queued -> cancelled; failed -> queued (retry).
JOB_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        # The runner's claim: due queued jobs, by priority then age.
        Index("ix_jobs_status_run_at", "status", "run_at"),
        Index("ix_jobs_lock", "lock"),
        Index("ix_jobs_room", "room_id"),
        # At most one *queued* job per queueing lock: a second enqueue is a no-op.
        Index(
            "uq_jobs_queueing_lock_queued",
            "queueing_lock",
            unique=True,
            sqlite_where=text("status = 'queued'"),
            postgresql_where=text("status = 'queued'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100))
    args: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    # Higher runs first.
    priority: Mapped[int] = mapped_column(Integer, default=0)
    # Jobs sharing a lock run one at a time, in order (e.g. "room:<id>").
    lock: Mapped[str | None] = mapped_column(String(200), nullable=True)
    queueing_lock: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # The room the job works for (from its args): who may see it.
    room_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # Runs that succeeded or failed; a run deferred (RetryLater: no model reachable) counts
    # in `deferrals` instead, so an outage never exhausts a job.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    deferrals: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=5)
    run_at: Mapped[datetime] = mapped_column(default=utcnow)
    worker_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)


class JobSchedule(Base):
    """The last window of each periodic schedule that was enqueued: claimed with a conditional
    update, so one window runs once across any number of runners."""

    __tablename__ = "job_schedules"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    last_window: Mapped[datetime] = mapped_column()
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
