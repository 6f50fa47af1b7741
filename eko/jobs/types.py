"""The shapes every jobs backend shares: what a job is, what a listing shows, what a job may
raise to be run again later, and who hears about a job's progress."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

# One vocabulary for both backends (procrastinate's todo/doing are mapped onto it).
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running", "succeeded", "failed", "cancelled")

# What a job event says happened: the event bus publishes it as "job.<kind>".
JobEventKind = Literal["started", "succeeded", "failed", "deferred", "retrying"]


class RetryLater(Exception):
    """Raised by a job (or by the runner for a job that needs a model while none is
    reachable): run it again later, with backoff; this never exhausts the job's attempts."""

    def __init__(self, reason: str, *, delay_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay_s = delay_s


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """How a backend's worker runs (both backends take the same knobs).

    concurrency: jobs run at once; poll_s: how often the queue is looked at when nothing woke
    the worker; stalled_after_s: a running job whose worker is silent this long goes back to
    the queue; shutdown_grace_s: what running jobs get at aclose(); model_wait_s: the first
    delay of a job waiting for a model (then doubling).
    """

    concurrency: int = 2
    poll_s: float = 2.0
    stalled_after_s: float = 30.0
    shutdown_grace_s: float = 10.0
    model_wait_s: float = 15.0


@dataclass(frozen=True, slots=True)
class JobInfo:
    """One job as listings show it (eko jobs list, GET /v1/staff/jobs)."""

    id: int
    name: str
    status: JobStatus
    args: dict[str, Any] = field(default_factory=dict)
    room_id: str | None = None
    attempts: int = 0
    priority: int = 0
    lock: str | None = None
    queueing_lock: str | None = None
    run_at: datetime | None = None
    error: str | None = None


class JobListener(Protocol):
    """Hears each job's progress (the event bus turns it into `job.*` events)."""

    async def __call__(self, kind: JobEventKind, job: JobInfo) -> None: ...


Handler = Callable[[dict[str, Any]], Awaitable[None]]


def room_of(args: dict[str, Any]) -> str | None:
    """The room a job works for, read from its arguments: who may see its progress."""
    room = args.get("room_id")
    return room if isinstance(room, str) else None
