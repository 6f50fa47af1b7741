"""Faults across processes: two API workers (`eko serve`) and two job workers (`eko worker`) on
PostgreSQL, a fake OpenAI-compatible upstream (bench/eko_bench/load/fake_upstream.py).

- PostgreSQL restarted mid-run: every request gets a reply or a clear 503 (never a 500),
  nothing acknowledged is lost, every message is answered exactly once, and the jobs resume;
- a provider that hangs while jobs run: the fallback answers every message, the jobs that need
  a model complete (they wait, they do not pile up failures), no process dies.

(The SIGKILLed job worker is in test_cross_process.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import select, text

from eko.store.db import Database
from eko.store.migrate import upgrade
from eko.store.models import Message
from eko_bench.load.fake_upstream import FakeUpstream
from tests.jobs.conftest import empty_procrastinate
from tests.jobs.restartable_pg import restartable_postgres
from tests.jobs.test_cross_process import Cluster, cluster, new_room, pro_user
from tests.pg import create_database

pytestmark = [pytest.mark.slow, pytest.mark.processes]

EXTRACT = "after_reply.memory.extract"


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


@dataclass
class Ledger:
    """What the clients saw: every status, and the messages acknowledged (2xx) per room."""

    statuses: Counter[int | str] = field(default_factory=Counter)
    acknowledged: dict[str, set[str]] = field(default_factory=dict)
    bodies_500: list[str] = field(default_factory=list)


async def post_with_retries(
    client: httpx.AsyncClient,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    ledger: Ledger,
    *,
    give_up_at: float,
) -> int | None:
    """A well-behaved client: a 503 (or no answer) is retried with the same client_message_id
    after Retry-After (at most 1 s here); the final status, None if it never got one."""
    while time.monotonic() < give_up_at:
        try:
            response = await client.post(url, json=body, headers=headers)
        except httpx.TransportError as exc:
            ledger.statuses[type(exc).__name__] += 1
            await asyncio.sleep(0.5)
            continue
        ledger.statuses[response.status_code] += 1
        if response.status_code >= 500 and response.status_code != 503:
            ledger.bodies_500.append(response.text[:300])
        if response.status_code != 503:
            return response.status_code
        assert response.headers.get("Retry-After"), "a 503 must say when to come back"
        await asyncio.sleep(min(float(response.headers["Retry-After"]), 1.0))
    return None


async def user_loop(
    api: list[str],
    room: str,
    headers: dict[str, str],
    ledger: Ledger,
    *,
    user: int,
    until: float,
) -> None:
    """Post one message after the other until `until`, alternating API workers."""
    acknowledged = ledger.acknowledged.setdefault(room, set())
    async with httpx.AsyncClient(timeout=60) as client:
        index = 0
        while time.monotonic() < until:
            token = f"u{user}-m{index}"
            status = await post_with_retries(
                client,
                f"{api[index % 2]}/v1/rooms/{room}/messages",
                {
                    "content": f"Message {index} de l'utilisateur {user}.",
                    "client_message_id": token,
                },
                headers,
                ledger,
                give_up_at=until + 60,
            )
            if status is not None and 200 <= status < 300:
                acknowledged.add(token)
            index += 1


async def stored_exchanges(database: Database) -> list[tuple[str, str, int]]:
    """(room, user message dedupe key, replies to it) for every stored user message."""
    async with database.engine.connect() as connection:
        rows = (
            await connection.execute(
                text(
                    "SELECT m.room_id, m.dedupe_key, "
                    "(SELECT count(*) FROM messages r WHERE r.reply_to_id = m.id "
                    " AND r.role = 'assistant') "
                    "FROM messages m WHERE m.role = 'user'"
                )
            )
        ).all()
    return [(str(room), str(key), int(replies)) for room, key, replies in rows]


async def job_statuses(database: Database, task: str) -> Counter[str]:
    async with database.engine.connect() as connection:
        rows = (
            await connection.execute(
                text(
                    "SELECT status::text, count(*) FROM procrastinate_jobs "
                    "WHERE task_name = :t GROUP BY status"
                ),
                {"t": task},
            )
        ).all()
    return Counter({str(status): int(count) for status, count in rows})


async def settled_jobs(database: Database, task: str, *, timeout_s: float) -> Counter[str]:
    """The job statuses once none is waiting or running (or after `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    statuses = await job_statuses(database, task)
    while time.monotonic() < deadline and (statuses["todo"] or statuses["doing"]):
        await asyncio.sleep(0.5)
        statuses = await job_statuses(database, task)
    return statuses


async def workers_ready(database: Database, count: int, *, timeout_s: float = 60) -> None:
    """Wait until `count` job workers registered (a worker starting during the outage would
    exit on its start-up check: that is `eko worker` refusing a database it cannot reach)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        async with database.engine.connect() as connection:
            registered = (
                await connection.execute(text("SELECT count(*) FROM procrastinate_workers"))
            ).scalar_one()
        if registered >= count:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{count} job workers did not register within {timeout_s:.0f} s")


async def received_message(ws: Any, message_id: str, *, timeout_s: float = 20) -> bool:
    """Whether the events stream delivers message.created for `message_id` in time."""
    deadline = time.monotonic() + timeout_s
    with contextlib.suppress(TimeoutError):
        while True:
            event = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
            if event["type"] == "message.created" and event["data"].get("message_id") == message_id:
                return True
    return False


async def assert_alive(running: Cluster) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        for url in running.api:
            assert (await client.get(f"{url}/health")).status_code == 200
    assert [w.poll() for w in running.workers] == [None] * len(running.workers), "a worker died"


def token_of(dedupe_key: str) -> str:
    # user:{room}:{user}:{client_message_id}
    return dedupe_key.rsplit(":", 1)[1]


async def test_postgres_restarted_mid_run_loses_nothing_acknowledged(tmp_path: Path) -> None:
    users = 6
    with restartable_postgres() as server:
        url = await create_database(server.url)
        database = Database(url)
        try:
            await upgrade(database)
            async with cluster(
                database, tmp_path, latency_s=0.1, job_workers=2, extraction=True
            ) as running:
                await workers_ready(database, 2)
                accounts = [await pro_user(database, f"user{i}") for i in range(users)]
                rooms = [await new_room(database, user) for user, _ in accounts]
                ledger = Ledger()
                began = time.monotonic()
                until = began + 15.0
                clients = asyncio.gather(
                    *(
                        user_loop(running.api, room, headers, ledger, user=i, until=until)
                        for i, (room, (_, headers)) in enumerate(zip(rooms, accounts, strict=True))
                    )
                )
                ws_url = running.api[0].replace("http://", "ws://") + "/v1/events"
                async with websockets.connect(ws_url, additional_headers=accounts[0][1]) as ws:
                    # Traffic for 3 s (and until a first answer: a loaded machine is slower),
                    # PostgreSQL down for 3 s, then traffic again.
                    await asyncio.sleep(3.0)
                    for _ in range(70):  # at most 7 s more
                        if ledger.statuses[201]:
                            break
                        await asyncio.sleep(0.1)
                    ok_before_restart = ledger.statuses[201]
                    await server.restart(down_s=3.0)
                    await clients
                    # Live events flow across workers again: posted through the other worker.
                    async with httpx.AsyncClient(timeout=60) as client:
                        after = await client.post(
                            f"{running.api[1]}/v1/rooms/{rooms[0]}/messages",
                            json={"content": "Après le redémarrage."},
                            headers=accounts[0][1],
                        )
                    assert after.status_code == 201
                    seen_after = await received_message(ws, after.json()["user_message"]["id"])
                extract = await settled_jobs(database, EXTRACT, timeout_s=60)
                await assert_alive(running)
            exchanges = await stored_exchanges(database)
        finally:
            await database.dispose()

    explain = f"statuses {dict(ledger.statuses)}; 5xx bodies {ledger.bodies_500[:3]}"
    assert seen_after, "no message.created event after the restart"
    # The outage was seen, and answered with 503s, never with a 500 or a dropped connection.
    assert ok_before_restart > 0, explain
    assert ledger.statuses[503] > 0, explain
    assert set(ledger.statuses) <= {201, 503}, explain
    # Traffic resumed after the restart.
    acknowledged = {
        (room, token) for room, tokens in ledger.acknowledged.items() for token in tokens
    }
    assert ledger.statuses[201] > ok_before_restart + users, explain
    # Nothing acknowledged is lost; every stored message is answered exactly once.
    stored = {(room, token_of(key)): replies for room, key, replies in exchanges}
    assert acknowledged <= set(stored), explain
    assert len(exchanges) == len(stored)  # no message stored twice
    assert Counter(stored.values()) == Counter({1: len(stored)}), "a message without one reply"
    # Jobs resumed: none left waiting or running, none failed, and jobs ran after the restart.
    assert extract["todo"] == extract["doing"] == 0, extract
    assert extract["failed"] == 0, extract
    assert extract["succeeded"] > ok_before_restart, extract


async def test_a_hung_provider_while_jobs_run_leaves_everything_answered(
    pg: Database, tmp_path: Path
) -> None:
    def providers(upstream: FakeUpstream) -> list[dict[str, Any]]:
        return [
            {
                "kind": "openai",
                "name": "primary",
                "base_url": upstream.hung_base_url,
                "model": "fake",
                "timeout_s": 2.0,
            },
            {
                "kind": "openai",
                "name": "fallback",
                "base_url": upstream.fast_base_url,
                "model": "fake",
            },
        ]

    users = 6
    async with cluster(
        pg, tmp_path, latency_s=0.1, job_workers=2, extraction=True, providers=providers
    ) as running:
        accounts = [await pro_user(pg, f"user{i}") for i in range(users)]
        rooms = [await new_room(pg, user) for user, _ in accounts]
        ledger = Ledger()
        until = time.monotonic() + 5.0
        await asyncio.gather(
            *(
                user_loop(running.api, room, headers, ledger, user=i, until=until)
                for i, (room, (_, headers)) in enumerate(zip(rooms, accounts, strict=True))
            )
        )
        extract = await settled_jobs(pg, EXTRACT, timeout_s=60)
        await assert_alive(running)
        hung = (await running_upstream_counts(running)).hung
        async with pg.session() as session:
            metas = (
                await session.execute(
                    select(Message.meta).where(
                        Message.role == "assistant", Message.type == "message"
                    )
                )
            ).scalars()
            providers_used = Counter(str((meta or {}).get("provider")) for meta in metas)
    explain = f"statuses {dict(ledger.statuses)}; 5xx bodies {ledger.bodies_500[:3]}"
    assert set(ledger.statuses) == {201}, explain
    answered = ledger.statuses[201]
    assert answered >= users, explain
    assert hung > 0  # the primary was really tried
    assert providers_used == Counter({"fallback": answered}), providers_used
    # Every extraction job ran to the end through the fallback: none failed, none stuck.
    assert extract == Counter({"succeeded": answered}), extract


async def running_upstream_counts(running: Cluster) -> Any:
    assert running.upstream is not None
    return await running.upstream.counts()
