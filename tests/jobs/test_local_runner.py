"""The in-process runner, on SQLite and on PostgreSQL (its table exists on both)."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update

from eko.jobs import local_store
from eko.jobs.backoff import Backoff
from eko.jobs.local import LocalJobQueue
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.jobs.types import JobEventKind, JobInfo, WorkerOptions
from eko.store.db import Database
from eko.store.jobs_models import Job
from tests.jobs.conftest import Recorder


def registry_with(
    recorder: Recorder, *, name: str = "test.record", **options: object
) -> JobRegistry:
    registry = JobRegistry(model_available=options.pop("model_available", None))  # type: ignore[arg-type]
    registry.register(JobDefinition(name, recorder, **options))  # type: ignore[arg-type]
    return registry


async def job_row(database: Database, job_id: int) -> Job:
    async with database.session() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def make_due(database: Database, job_id: int) -> None:
    async with database.session() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(run_at=datetime.now(UTC) - timedelta(seconds=1))
        )
        await session.commit()


async def test_a_job_persists_and_a_new_runner_resumes_it(
    database: Database, recorder: Recorder
) -> None:
    first = LocalJobQueue(database, registry_with(recorder), burst_on_enqueue=False)
    job_id = await first.enqueue("test.record", {"room_id": "r1", "n": 1})
    assert job_id is not None
    await first.aclose()  # the process stops before running it
    assert recorder.calls == []
    assert (await job_row(database, job_id)).status == "queued"

    restarted = LocalJobQueue(database, registry_with(recorder))
    await restarted.drain()
    assert recorder.calls == [{"room_id": "r1", "n": 1}]
    assert (await job_row(database, job_id)).status == "succeeded"
    listed = await restarted.list_jobs(room_ids=["r1"])
    assert [(j.id, j.status, j.room_id) for j in listed] == [(job_id, "succeeded", "r1")]


async def test_a_job_of_a_killed_runner_is_requeued_and_runs_once(
    database: Database, recorder: Recorder
) -> None:
    dead = LocalJobQueue(database, registry_with(recorder), burst_on_enqueue=False)
    job_id = await dead.enqueue("test.record", {"n": 1})
    claimed = await local_store.claim(database, worker_id="dead-runner")
    assert claimed is not None and claimed.id == job_id
    # The process is killed mid-job: no finish, no more heartbeats.
    async with database.session() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=5))
        )

    runner = LocalJobQueue(
        database, registry_with(recorder), worker=WorkerOptions(stalled_after_s=5, poll_s=0.05)
    )
    await runner.start()
    try:
        for _ in range(200):
            if (await job_row(database, job_id)).status == "succeeded":
                break
            await asyncio.sleep(0.05)
    finally:
        await runner.aclose()
    job = await job_row(database, job_id)
    assert job.status == "succeeded"
    assert recorder.calls == [{"n": 1}]  # once: the dead run never finished
    assert job.attempts == 2  # the killed run counted


async def test_jobs_sharing_a_lock_never_overlap_and_run_in_order(database: Database) -> None:
    order: list[int] = []
    running = {"now": 0, "max": 0}
    side_by_side = asyncio.Event()

    async def body(args: dict[str, object]) -> None:
        running["now"] += 1
        running["max"] = max(running["max"], running["now"])
        if running["now"] > 1:
            side_by_side.set()
        if args.get("wait_for_company"):
            # Wait (boundedly) for another job to start: on a loaded machine a fixed short sleep
            # ends before the queue claims the next job, and the overlap would go unseen.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(side_by_side.wait(), timeout=5.0)
        else:
            await asyncio.sleep(0.02)
        order.append(int(args["n"]))  # type: ignore[call-overload]
        running["now"] -= 1

    registry = JobRegistry()
    registry.register(JobDefinition("test.locked", body))
    queue = LocalJobQueue(
        database, registry, worker=WorkerOptions(concurrency=4), burst_on_enqueue=False
    )
    for n in range(5):
        await queue.enqueue("test.locked", {"n": n}, lock="room:a")
    await queue.drain()
    assert order == [0, 1, 2, 3, 4]
    assert running["max"] == 1

    # Different locks do run side by side.
    order.clear()
    running["max"] = 0
    for n in range(4):
        await queue.enqueue("test.locked", {"n": n, "wait_for_company": True}, lock=f"room:{n}")
    await queue.drain()
    assert sorted(order) == [0, 1, 2, 3]
    assert running["max"] > 1


async def test_a_queueing_lock_keeps_one_queued_job(database: Database, recorder: Recorder) -> None:
    queue = LocalJobQueue(database, registry_with(recorder), burst_on_enqueue=False)
    first = await queue.enqueue("test.record", {"n": 1}, queueing_lock="summaries:r1")
    second = await queue.enqueue("test.record", {"n": 2}, queueing_lock="summaries:r1")
    assert first is not None and second is None
    await queue.drain()
    assert recorder.calls == [{"n": 1}]
    # Once it ran, the key is free again.
    assert await queue.enqueue("test.record", {"n": 3}, queueing_lock="summaries:r1") is not None


async def test_a_failing_job_is_retried_with_backoff_then_fails_and_can_be_retried(
    database: Database, recorder: Recorder
) -> None:
    recorder.failures_left = 2
    # A backoff far longer than any test run: the clock is moved by hand, not waited for, so a
    # slow machine can never make the retry due within the first drain.
    registry = registry_with(recorder, max_attempts=2, backoff=Backoff(base_s=600, cap_s=3600))
    queue = LocalJobQueue(database, registry, burst_on_enqueue=False)
    job_id = await queue.enqueue("test.record", {"n": 1})
    assert job_id is not None
    before = datetime.now(UTC)
    await queue.drain()
    job = await job_row(database, job_id)
    assert (job.status, job.attempts) == ("queued", 1)
    assert job.last_error == "RuntimeError: boom"
    assert job.run_at >= before + timedelta(seconds=600)  # backoff: not due yet
    await queue.drain()
    assert (await job_row(database, job_id)).attempts == 1  # drain does not run it early

    await make_due(database, job_id)  # the backoff has passed
    await queue.drain()
    job = await job_row(database, job_id)
    assert (job.status, job.attempts) == ("failed", 2)  # out of attempts
    assert recorder.calls == []

    assert await queue.retry(job_id)
    await queue.drain()
    assert (await job_row(database, job_id)).status == "succeeded"
    assert recorder.calls == [{"n": 1}]
    assert not await queue.retry(job_id)  # only failed jobs


async def test_a_job_needing_a_model_waits_while_none_is_reachable(
    database: Database, recorder: Recorder
) -> None:
    available = {"model": False}
    events: list[tuple[JobEventKind, int]] = []

    async def listener(kind: JobEventKind, job: JobInfo) -> None:
        events.append((kind, job.id))

    registry = registry_with(
        recorder, uses_model=True, max_attempts=1, model_available=lambda: available["model"]
    )
    queue = LocalJobQueue(
        database,
        registry,
        worker=WorkerOptions(model_wait_s=0.2),
        burst_on_enqueue=False,
        listener=listener,
    )
    job_id = await queue.enqueue("test.record", {"n": 1})
    assert job_id is not None
    for _ in range(3):  # three outages in a row: never exhausted, never run, never lost
        await queue.drain()
        job = await job_row(database, job_id)
        assert (job.status, job.attempts) == ("queued", 0)
        await asyncio.sleep(0.2 * 2**job.deferrals)
    assert recorder.calls == []
    assert job.deferrals == 3
    assert ("deferred", job_id) in events

    available["model"] = True
    await asyncio.sleep(0.2 * 2**3)
    await queue.drain()
    assert recorder.calls == [{"n": 1}]
    assert (await job_row(database, job_id)).status == "succeeded"
    assert events[-1] == ("succeeded", job_id)


async def test_a_cancelled_job_never_runs(database: Database, recorder: Recorder) -> None:
    queue = LocalJobQueue(database, registry_with(recorder), burst_on_enqueue=False)
    job_id = await queue.enqueue("test.record", {"n": 1})
    assert job_id is not None
    assert await queue.cancel(job_id)
    await queue.drain()
    assert recorder.calls == []
    assert (await job_row(database, job_id)).status == "cancelled"
    assert not await queue.cancel(job_id)
    assert (await queue.counts()).get("cancelled") == 1


async def test_shutdown_puts_a_running_job_back_without_counting_it(
    database: Database, recorder: Recorder
) -> None:
    recorder.hold_s = 30
    queue = LocalJobQueue(
        database,
        registry_with(recorder),
        worker=WorkerOptions(shutdown_grace_s=0.05),
        burst_on_enqueue=False,
    )
    await queue.start()
    job_id = await queue.enqueue("test.record", {"n": 1})
    assert job_id is not None
    for _ in range(200):
        if recorder.running:
            break
        await asyncio.sleep(0.02)
    await queue.aclose()
    job = await job_row(database, job_id)
    assert (job.status, job.attempts) == ("queued", 0)

    recorder.hold_s = 0
    await LocalJobQueue(database, registry_with(recorder)).drain()
    assert recorder.calls == [{"n": 1}]


async def test_enqueue_runs_a_burst_that_leaves_no_task_behind(
    database: Database, recorder: Recorder
) -> None:
    queue = LocalJobQueue(database, registry_with(recorder))
    await queue.enqueue("test.record", {"n": 1})
    await queue.drain()
    assert recorder.calls == [{"n": 1}]
    assert queue.running == 0


async def test_pruning_removes_old_finished_jobs_only(
    database: Database, recorder: Recorder
) -> None:
    queue = LocalJobQueue(database, registry_with(recorder), burst_on_enqueue=False)
    done = await queue.enqueue("test.record", {"n": 1})
    await queue.drain()
    waiting = await queue.enqueue("test.record", {"n": 2}, delay_s=3600)
    async with database.session() as session:
        await session.execute(
            update(Job)
            .where(Job.id == done)
            .values(finished_at=datetime.now(UTC) - timedelta(days=30))
        )
    assert await queue.prune(timedelta(days=7)) == 1
    async with database.session() as session:
        left = list((await session.execute(select(Job.id))).scalars())
    assert left == [waiting]
