"""The PostgreSQL backend (procrastinate) behind the same interface, on the embedded server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import text

from eko.jobs.backoff import Backoff
from eko.jobs.procrastinate_queue import ProcrastinateJobQueue
from eko.jobs.procrastinate_support import libpq_conninfo
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.jobs.types import WorkerOptions
from eko.store.db import Database
from tests.jobs.conftest import Recorder, empty_procrastinate


@pytest.fixture
async def pg(pg_database_url: str) -> AsyncIterator[Database]:
    database = Database(pg_database_url)
    await empty_procrastinate(database)
    try:
        yield database
    finally:
        await database.dispose()


def make_queue(database: Database, registry: JobRegistry, **worker: Any) -> ProcrastinateJobQueue:
    worker.setdefault("poll_s", 0.2)
    return ProcrastinateJobQueue(database.url, registry, worker=WorkerOptions(**worker))


def test_the_sqlalchemy_url_becomes_a_libpq_uri() -> None:
    assert (
        libpq_conninfo("postgresql+asyncpg://eko:s3cret@db.example:5432/eko?ssl=require")
        == "postgresql://eko:s3cret@db.example:5432/eko?sslmode=require"
    )


async def test_a_job_runs_once_and_is_listed_with_its_room(pg: Database) -> None:
    recorder = Recorder()
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", recorder))
    queue = make_queue(pg, registry)
    try:
        job_id = await queue.enqueue("test.record", {"room_id": "r1", "n": 1})
        assert job_id is not None
        await queue.drain()
        assert recorder.calls == [{"room_id": "r1", "n": 1}]
        listed = await queue.list_jobs(room_ids=["r1"])
        assert [(j.id, j.status, j.room_id) for j in listed] == [(job_id, "succeeded", "r1")]
        assert await queue.list_jobs(room_ids=["another"]) == []
        assert (await queue.counts()).get("succeeded") == 1
    finally:
        await queue.aclose()


async def test_a_queueing_lock_keeps_one_queued_job(pg: Database) -> None:
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", Recorder()))
    queue = make_queue(pg, registry)
    try:
        assert await queue.enqueue("test.record", {"n": 1}, queueing_lock="k") is not None
        assert await queue.enqueue("test.record", {"n": 2}, queueing_lock="k") is None
    finally:
        await queue.aclose()


async def test_jobs_sharing_a_lock_never_overlap_across_two_workers(pg: Database) -> None:
    recorder = Recorder(hold_s=0.05)
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", recorder))
    one, two = make_queue(pg, registry, concurrency=3), make_queue(pg, registry, concurrency=3)
    try:
        await one.start()
        await two.start()
        for n in range(6):
            await one.enqueue("test.record", {"n": n}, lock="room:a")
        for _ in range(400):
            if len(recorder.calls) == 6:
                break
            await asyncio.sleep(0.05)
    finally:
        await one.aclose()
        await two.aclose()
    assert [c["n"] for c in recorder.calls] == [0, 1, 2, 3, 4, 5]
    assert recorder.max_running == 1


async def test_the_next_job_of_a_lock_is_woken_not_left_for_the_poll(pg: Database) -> None:
    recorder = Recorder()
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", recorder))
    # A poll this slow would take minutes for three jobs of one lock.
    queue = make_queue(pg, registry, poll_s=120)
    try:
        await queue.start()
        for n in range(3):
            await queue.enqueue("test.record", {"n": n}, lock="room:a")
        for _ in range(300):
            if len(recorder.calls) == 3:
                break
            await asyncio.sleep(0.1)
    finally:
        await queue.aclose()
    assert [c["n"] for c in recorder.calls] == [0, 1, 2]


async def test_a_job_needing_a_model_is_requeued_not_run_while_none_is_reachable(
    pg: Database,
) -> None:
    recorder = Recorder()
    available = {"model": False}
    registry = JobRegistry(model_available=lambda: available["model"])
    registry.register(JobDefinition("test.record", recorder, uses_model=True, max_attempts=1))
    queue = make_queue(pg, registry, model_wait_s=0.5)
    try:
        job_id = await queue.enqueue("test.record", {"n": 1})
        assert job_id is not None
        await queue.drain()
        job = await queue.get(job_id)
        assert job is not None and job.status == "queued"  # kept, due later
        assert job.run_at is not None and job.run_at > datetime.now(UTC)
        assert recorder.calls == []

        available["model"] = True
        await asyncio.sleep(0.6)
        await queue.drain()
        assert recorder.calls == [{"n": 1}]
    finally:
        await queue.aclose()


async def test_a_failing_job_retries_with_backoff_then_fails_and_can_be_retried(
    pg: Database,
) -> None:
    recorder = Recorder(failures_left=2)
    registry = JobRegistry()
    registry.register(
        # A retry 3 s later: with 0.3 s, a drain slowed by a busy machine reached the retry
        # itself and the job was already failed at the first look.
        JobDefinition("test.record", recorder, max_attempts=2, backoff=Backoff(3.0, 60))
    )
    queue = make_queue(pg, registry)
    try:
        job_id = await queue.enqueue("test.record", {"n": 1})
        assert job_id is not None
        await queue.drain()
        job = await queue.get(job_id)
        assert job is not None and (job.status, job.attempts) == ("queued", 1)
        await asyncio.sleep(3.2)
        await queue.drain()
        job = await queue.get(job_id)
        assert job is not None and job.status == "failed"
        assert recorder.calls == []
        assert await queue.retry(job_id)
        await queue.drain()
        assert recorder.calls == [{"n": 1}]
        assert not await queue.retry(job_id)
    finally:
        await queue.aclose()


async def test_a_cancelled_job_never_runs(pg: Database) -> None:
    recorder = Recorder()
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", recorder))
    queue = make_queue(pg, registry)
    try:
        job_id = await queue.enqueue("test.record", {"n": 1}, delay_s=3600)
        assert job_id is not None and await queue.cancel(job_id)
        job = await queue.get(job_id)
        assert job is not None and job.status == "cancelled"
    finally:
        await queue.aclose()


async def test_a_periodic_job_runs_once_per_window_across_two_workers(pg: Database) -> None:
    windows: list[str] = []

    async def tick(args: dict[str, Any]) -> None:
        windows.append(str(args["window"]))

    registry = JobRegistry()
    registry.register(JobDefinition("test.tick", tick))
    registry.every("test.tick", job="test.tick", cron="* * * * * *")  # every second
    one, two = make_queue(pg, registry), make_queue(pg, registry)
    try:
        await one.start()
        await two.start()
        await asyncio.sleep(3.5)
    finally:
        await one.aclose()
        await two.aclose()
    assert len(windows) >= 2
    assert len(windows) == len(set(windows))  # never twice for one window


async def test_a_job_of_a_killed_worker_is_retried_and_completes_once(pg: Database) -> None:
    recorder = Recorder()
    registry = JobRegistry()
    registry.register(JobDefinition("test.record", recorder))
    queue = make_queue(pg, registry, stalled_after_s=5)
    try:
        job_id = await queue.enqueue("test.record", {"n": 1})
        # A worker took the job and was SIGKILLed: "doing", heartbeat long stopped.
        async with pg.engine.begin() as connection:
            worker = (
                await connection.execute(
                    text(
                        "INSERT INTO procrastinate_workers (last_heartbeat) "
                        "VALUES (now() - interval '10 minutes') RETURNING id"
                    )
                )
            ).scalar_one()
            await connection.execute(
                text(
                    "UPDATE procrastinate_jobs SET status = 'doing', worker_id = :w WHERE id = :j"
                ),
                {"w": worker, "j": job_id},
            )
        await queue.start()
        for _ in range(300):  # the stalled-jobs check runs every 10 s
            if recorder.calls:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
    finally:
        await queue.aclose()
    assert recorder.calls == [{"n": 1}]
    info = await _status(pg, job_id)
    assert info == "succeeded"


async def _status(database: Database, job_id: int | None) -> str:
    async with database.engine.connect() as connection:
        return str(
            (
                await connection.execute(
                    text("SELECT status::text FROM procrastinate_jobs WHERE id = :j"),
                    {"j": job_id},
                )
            ).scalar_one()
        )
