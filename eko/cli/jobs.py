"""`eko jobs list|retry|cancel`: background jobs on either backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.table import Table

from eko.cli.common import console, fail, load_settings, require_migrated, run

if TYPE_CHECKING:
    from eko.jobs.queue import JobQueue

app = typer.Typer(help="Background jobs: list, retry, cancel.", no_args_is_help=True)

STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


@asynccontextmanager
async def job_queue() -> AsyncIterator[JobQueue]:
    """The configured queue, for inspection only (no job code is loaded: nothing runs)."""
    from eko.jobs.build import build_job_queue
    from eko.jobs.registry import JobRegistry
    from eko.store.db import Database

    settings = load_settings()
    database = Database(settings.database_url)
    queue = build_job_queue(settings, database, JobRegistry())
    try:
        await require_migrated(database, settings)
        yield queue
    finally:
        await queue.aclose()
        await database.dispose()


@app.command("list")
def list_command(
    status: Annotated[str | None, typer.Option(help=f"One of: {', '.join(STATUSES)}.")] = None,
    room: Annotated[str | None, typer.Option(help="Only jobs working for this room id.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """Jobs, most recent first, with counts per status."""
    if status is not None and status not in STATUSES:
        fail(f"unknown status {status!r}", fix=f"use one of: {', '.join(STATUSES)}")

    async def go() -> tuple[str, dict[str, int], list[Any]]:
        async with job_queue() as queue:
            jobs = await queue.list_jobs(
                status=cast(Any, status), room_ids=[room] if room else None, limit=limit
            )
            return queue.backend, await queue.counts(), jobs

    backend, counts, jobs = run(go())
    summary = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES)
    console.print(f"backend: {backend} — {summary}")
    table = Table("id", "job", "status", "room", "attempts", "run at", "error")
    for job in jobs:
        table.add_row(
            str(job.id),
            job.name,
            job.status,
            job.room_id or "",
            str(job.attempts),
            job.run_at.strftime("%Y-%m-%d %H:%M:%S") if job.run_at else "",
            (job.error or "")[:60],
        )
    console.print(table)


def _act_on_job(job_id: int, action: str, refusal: str) -> None:
    """Run queue.retry or queue.cancel on one job; exit with a fix if it is unknown or refused."""

    async def go() -> tuple[bool, str | None]:
        async with job_queue() as queue:
            done = await getattr(queue, action)(job_id)
            job = await queue.get(job_id)
            return done, job.status if job else None

    done, status = run(go())
    if status is None:
        fail(f"no job {job_id}", fix="`eko jobs list` shows the ids")
    if not done:
        fail(f"job {job_id} is {status}: {refusal}")


@app.command("retry")
def retry_command(job_id: int) -> None:
    """Put a failed job back in the queue, due now."""
    _act_on_job(job_id, "retry", "only failed jobs are retried")
    console.print(f"job {job_id}: queued again")


@app.command("cancel")
def cancel_command(job_id: int) -> None:
    """Cancel a queued job: it will not run."""
    _act_on_job(job_id, "cancel", "only queued jobs can be cancelled")
    console.print(f"job {job_id}: cancelled")
