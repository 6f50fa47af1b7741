"""Staff view of background jobs: queued, running, failed; retry a failed one, cancel a queued
one. The same on both backends (the in-process runner, procrastinate)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from eko.api.deps import ServicesDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.jobs.types import JobInfo, JobStatus

router = APIRouter(prefix="/v1/staff/jobs", tags=["jobs"])

# Job ids are 64-bit integers on both backends.
JobId = Annotated[int, Path(ge=1, le=2**63 - 1)]


class JobOut(BaseModel):
    id: int
    name: str
    status: JobStatus
    room_id: str | None
    attempts: int
    priority: int
    lock: str | None
    run_at: datetime | None
    error: str | None
    args: dict[str, Any]


class JobList(BaseModel):
    backend: str
    counts: dict[str, int]
    jobs: list[JobOut]


def job_out(job: JobInfo) -> JobOut:
    return JobOut(
        id=job.id,
        name=job.name,
        status=job.status,
        room_id=job.room_id,
        attempts=job.attempts,
        priority=job.priority,
        lock=job.lock,
        run_at=job.run_at,
        error=job.error,
        args=job.args,
    )


@router.get("", responses=problem_responses(403))
async def list_jobs(
    _staff: StaffUser,
    services: ServicesDep,
    status: JobStatus | None = None,
    room_id: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JobList:
    """Most recent first; filter by status and room."""
    jobs = await services.jobs.list_jobs(
        status=status, room_ids=[room_id] if room_id else None, limit=limit
    )
    return JobList(
        backend=services.jobs.backend,
        counts=await services.jobs.counts(),
        jobs=[job_out(job) for job in jobs],
    )


async def _job_or_404(services: ServicesDep, job_id: int) -> JobInfo:
    job = await services.jobs.get(job_id)
    if job is None:
        raise Problem(404, "job-not-found", "Job not found", f"No job {job_id}.")
    return job


@router.post("/{job_id}/retry", responses=problem_responses(403, 404, 409))
async def retry_job(job_id: JobId, _staff: StaffUser, services: ServicesDep) -> JobOut:
    """A failed job goes back to the queue, due now."""
    job = await _job_or_404(services, job_id)
    if not await services.jobs.retry(job_id):
        raise Problem(
            409, "job-not-retryable", "Job not retryable", f"Job {job_id} is {job.status}."
        )
    return job_out(await _job_or_404(services, job_id))


@router.post("/{job_id}/cancel", responses=problem_responses(403, 404, 409))
async def cancel_job(job_id: JobId, _staff: StaffUser, services: ServicesDep) -> JobOut:
    """A queued job is cancelled: it will not run."""
    job = await _job_or_404(services, job_id)
    if not await services.jobs.cancel(job_id):
        raise Problem(
            409, "job-not-cancellable", "Job not cancellable", f"Job {job_id} is {job.status}."
        )
    return job_out(await _job_or_404(services, job_id))
