"""Staff routes for jobs, and after-reply hooks running as jobs, through the API harness."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import (
    HarnessFactory,
    make_harness,  # noqa: F401  (the fixture, shared)
)


async def test_after_reply_hooks_run_as_room_jobs_visible_to_staff_only(
    make_harness: HarnessFactory,  # noqa: F811
    clean_database: Any,
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        _, staff = await h.user("ops", role="staff")
        room = await h.direct_room(alice)
        posted = await h.client.post(
            f"/v1/rooms/{room}/messages", json={"content": "Bonjour"}, headers=alice
        )
        assert posted.status_code == 201
        await h.services.jobs.drain()

        assert (await h.client.get("/v1/staff/jobs", headers=alice)).status_code == 403
        listed = await h.client.get(f"/v1/staff/jobs?room_id={room}", headers=staff)
        assert listed.status_code == 200
        body = listed.json()
        names = sorted(job["name"] for job in body["jobs"])
        assert names == [
            "after_reply.memory.summaries",
            "after_reply.memory.turn_index",
            "after_reply.memory_guard_learn",
        ]
        assert {job["status"] for job in body["jobs"]} == {"succeeded"}
        assert {job["room_id"] for job in body["jobs"]} == {room}
        assert all(job["lock"] == f"room:{room}" for job in body["jobs"])
        assert body["backend"] == h.services.jobs.backend
        assert body["counts"]["succeeded"] >= 2
        other = await h.client.get("/v1/staff/jobs?room_id=nope", headers=staff)
        assert other.json()["jobs"] == []


async def test_staff_cancel_a_queued_job_and_retry_a_failed_one(
    make_harness: HarnessFactory,  # noqa: F811
    clean_database: Any,
) -> None:
    async with make_harness(jobs_max_attempts=1) as h:
        _, staff = await h.user("ops", role="staff")
        jobs = h.services.jobs
        later = await jobs.enqueue("maintenance.prune_jobs", {}, delay_s=3600)
        cancelled = await h.client.post(f"/v1/staff/jobs/{later}/cancel", headers=staff)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        again = await h.client.post(f"/v1/staff/jobs/{later}/cancel", headers=staff)
        assert again.status_code == 409
        assert again.json()["type"] == "urn:eko:problem:job-not-cancellable"

        # Arguments its code cannot use: it fails (one attempt allowed).
        broken = await jobs.enqueue("after_reply.memory.summaries", {"room_id": "r"})
        await jobs.drain()
        failed = await h.client.get("/v1/staff/jobs?status=failed", headers=staff)
        assert [job["id"] for job in failed.json()["jobs"]] == [broken]
        retried = await h.client.post(f"/v1/staff/jobs/{broken}/retry", headers=staff)
        assert retried.status_code == 200 and retried.json()["status"] == "queued"
        not_failed = await h.client.post(f"/v1/staff/jobs/{later}/retry", headers=staff)
        assert not_failed.status_code == 409
        missing = await h.client.post("/v1/staff/jobs/999999/retry", headers=staff)
        assert missing.status_code == 404
        assert missing.json()["type"] == "urn:eko:problem:job-not-found"
