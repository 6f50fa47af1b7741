"""Across processes on the embedded PostgreSQL: two API workers (`eko serve`) and job workers
(`eko worker`), real sockets, a fake OpenAI-compatible upstream
(bench/eko_bench/load/fake_upstream.py).

- duplicates: 1,000 concurrent requests repeating 200 messages over both API workers store
  exactly 200 messages and 200 replies;
- a WebSocket client of one API worker sees messages posted through the other, and the job
  progress raised by job workers;
- a job worker SIGKILLed mid-job: the job is retried by another worker and completes once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import func, select, text

from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Message
from eko_bench.load.fake_upstream import FakeUpstream
from eko_bench.load.processes import ServerProcess, free_port, raise_open_files_limit
from tests.jobs.conftest import empty_procrastinate

pytestmark = [pytest.mark.slow, pytest.mark.processes]


@dataclass
class Cluster:
    api: list[str]
    database: Database
    env: dict[str, str]
    workdir: Path
    workers: list[subprocess.Popen[bytes]]
    upstream: FakeUpstream | None = None

    def start_worker(self, name: str) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "eko.cli", "worker"],
            env=self.env,
            cwd=self.workdir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.workers.append(process)
        return process


@pytest.fixture
async def pg(pg_database_url: str) -> AsyncIterator[Database]:
    from tests.conftest import _truncate as truncate_models
    from tests.conftest import run_isolated

    run_isolated(truncate_models(pg_database_url))
    database = Database(pg_database_url)
    await empty_procrastinate(database)
    try:
        yield database
    finally:
        await database.dispose()


@asynccontextmanager
async def cluster(
    database: Database,
    tmp_path: Path,
    *,
    latency_s: float,
    job_workers: int,
    extraction: bool = False,
    providers: Callable[[FakeUpstream], list[dict[str, Any]]] | None = None,
    settings: dict[str, str] | None = None,
) -> AsyncIterator[Cluster]:
    """Two API workers and `job_workers` job workers on `database`, one fake upstream; by
    default its fast route is the only provider."""
    raise_open_files_limit()
    base_env = {
        **os.environ,
        "EKO_HOME": str(tmp_path / "home"),
        "EKO_LOG_LEVEL": "WARNING",
    }
    async with AsyncExitStack() as stack:
        upstream = await stack.enter_async_context(
            FakeUpstream(latency_s=latency_s, workdir=tmp_path, env=base_env)
        )
        chosen = (
            providers(upstream)
            if providers is not None
            else [
                {
                    "kind": "openai",
                    "name": "fake",
                    "base_url": upstream.fast_base_url,
                    "model": "fake",
                }
            ]
        )
        env = {
            **base_env,
            "EKO_DATABASE_URL": database.url,
            "EKO_LLM_PROVIDERS": json.dumps(chosen),
            "EKO_MEMORY_EXTRACT_ENABLED": "true" if extraction else "false",
            "EKO_JOBS_WORKER_IN_PROCESS": "false",
            "EKO_JOBS_STALLED_AFTER_S": "5",
            "EKO_JOBS_POLL_INTERVAL_S": "0.5",
            **(settings or {}),
        }
        api: list[str] = []
        for index in range(2):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            await stack.enter_async_context(
                ServerProcess(
                    f"api-{index}",
                    [sys.executable, "-m", "eko.cli", "serve", "--port", str(port)],
                    ready_url=f"{url}/health",
                    env=env,
                    cwd=tmp_path,
                )
            )
            api.append(url)
        running = Cluster(api, database, env, tmp_path, [], upstream)
        try:
            for index in range(job_workers):
                running.start_worker(f"worker-{index}")
            yield running
        finally:
            for process in running.workers:
                if process.poll() is None:
                    process.terminate()
            for process in running.workers:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


async def pro_user(database: Database, name: str) -> tuple[Any, dict[str, str]]:
    async with database.session() as session:
        user, key = await user_repo.create_user(
            session, display_name=name, role="member", is_pro=True
        )
    return user, {"Authorization": f"Bearer {key}"}


async def new_room(database: Database, user: Any) -> str:
    async with database.session() as session:
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
        await room_repo.add_member(session, room_id=room.id, user_id=user.id)
        return str(room.id)


async def count_messages(database: Database, role: str) -> int:
    async with database.session() as session:
        return int(
            (
                await session.execute(
                    select(func.count()).select_from(Message).where(Message.role == role)
                )
            ).scalar_one()
        )


async def post_until_accepted(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]
) -> int:
    """Post like a well-behaved client: a 503 says nothing was stored; retry after it."""
    for _ in range(60):
        response = await client.post(url, json=body, headers=headers)
        if response.status_code != 503:
            return response.status_code
        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
    return 503


async def test_duplicates_across_two_api_workers_store_each_message_once(
    pg: Database, tmp_path: Path
) -> None:
    async with cluster(pg, tmp_path, latency_s=0.05, job_workers=2) as running:
        user, headers = await pro_user(pg, "alice")
        rooms = [await new_room(pg, user) for _ in range(20)]
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
        async with httpx.AsyncClient(timeout=300, limits=limits) as client:

            async def one(i: int) -> int:
                message = i % 200
                base = running.api[i % 2]
                return await post_until_accepted(
                    client,
                    f"{base}/v1/rooms/{rooms[message % 20]}/messages",
                    {"content": f"message {message}", "client_message_id": f"m{message}"},
                    headers,
                )

            statuses = await asyncio.gather(*(one(i) for i in range(1000)))
        assert set(statuses) == {201}
        assert await count_messages(pg, "user") == 200
        assert await count_messages(pg, "assistant") == 200
        async with pg.session() as session:
            answered = (
                await session.execute(
                    select(func.count(func.distinct(Message.reply_to_id))).where(
                        Message.role == "assistant"
                    )
                )
            ).scalar_one()
        assert answered == 200  # one reply to each message, not two to some


async def test_a_websocket_client_of_one_worker_sees_what_the_other_stored(
    pg: Database, tmp_path: Path
) -> None:
    async with cluster(pg, tmp_path, latency_s=0.05, job_workers=2) as running:
        user, headers = await pro_user(pg, "alice")
        _bob, bob_headers = await pro_user(pg, "bob")
        room = await new_room(pg, user)
        ws_url = running.api[0].replace("http://", "ws://") + "/v1/events"
        bob_url = running.api[1].replace("http://", "ws://") + "/v1/events"
        async with (
            websockets.connect(ws_url, additional_headers=headers) as ws,
            websockets.connect(bob_url, additional_headers=bob_headers) as bob_ws,
        ):
            assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "stream.connected"
            first = json.loads(await asyncio.wait_for(bob_ws.recv(), 10))
            assert first["type"] == "stream.connected"
            async with httpx.AsyncClient(timeout=60) as client:
                posted = await client.post(
                    f"{running.api[1]}/v1/rooms/{room}/messages",
                    json={"content": "Bonjour"},
                    headers=headers,
                )
            assert posted.status_code == 201
            seen: list[dict[str, Any]] = []
            while not (
                sum(e["type"] == "message.created" for e in seen) == 2
                and any(e["type"] == "job.succeeded" for e in seen)
            ):
                seen.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
            # Bob, on the other API worker, never received anything of Alice's room.
            bob_seen: list[dict[str, Any]] = []
            with contextlib.suppress(TimeoutError):
                while True:
                    bob_seen.append(json.loads(await asyncio.wait_for(bob_ws.recv(), 1.0)))
            assert [e for e in bob_seen if e["type"] != "stream.keepalive"] == []
        created = [e for e in seen if e["type"] == "message.created"]
        assert [e["data"]["role"] for e in created] == ["user", "assistant"]
        assert {e.get("room_id") for e in seen if e.get("room_id")} == {room}


async def test_a_job_worker_killed_mid_job_loses_nothing(pg: Database, tmp_path: Path) -> None:
    # Each model call takes 3 s: the extraction job is caught running.
    async with cluster(pg, tmp_path, latency_s=3.0, job_workers=1, extraction=True) as running:
        user, headers = await pro_user(pg, "alice")
        room = await new_room(pg, user)
        async with httpx.AsyncClient(timeout=120) as client:
            posted = await client.post(
                f"{running.api[0]}/v1/rooms/{room}/messages",
                json={"content": "Je m'appelle Alice et j'habite à Lyon."},
                headers=headers,
            )
        assert posted.status_code == 201
        job_id = await wait_for_job(pg, "after_reply.memory.extract", status="doing")
        os.kill(running.workers[0].pid, signal.SIGKILL)
        running.workers[0].wait()
        running.start_worker("worker-after-kill")
        # Stalled after 5 s without heartbeat, checked every 10 s, then 3 s of model call.
        status = await wait_for_status(pg, job_id, {"succeeded", "failed"}, timeout_s=90)
        assert status == "succeeded"
        async with pg.engine.connect() as connection:
            events = (
                await connection.execute(
                    text(
                        "SELECT type::text FROM procrastinate_events WHERE job_id = :j ORDER BY id"
                    ),
                    {"j": job_id},
                )
            ).scalars()
            kinds = list(events)
        assert kinds.count("succeeded") == 1  # completed once
        assert kinds.count("started") == 2  # the killed run, then the retry


async def wait_for_job(database: Database, task: str, *, status: str) -> int:
    for _ in range(600):
        async with database.engine.connect() as connection:
            found = (
                await connection.execute(
                    text(
                        "SELECT id FROM procrastinate_jobs WHERE task_name = :t "
                        "AND status::text = :s ORDER BY id LIMIT 1"
                    ),
                    {"t": task, "s": status},
                )
            ).scalar()
        if found is not None:
            return int(found)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {task} job reached {status}")


async def wait_for_status(
    database: Database, job_id: int, wanted: set[str], *, timeout_s: float
) -> str:
    status = ""
    for _ in range(int(timeout_s / 0.2)):
        async with database.engine.connect() as connection:
            status = str(
                (
                    await connection.execute(
                        text("SELECT status::text FROM procrastinate_jobs WHERE id = :j"),
                        {"j": job_id},
                    )
                ).scalar_one()
            )
        if status in wanted:
            return status
        await asyncio.sleep(0.2)
    return status
