"""Isolation across processes: two API workers, two job workers (`eko worker`) on PostgreSQL.

User A chats; the job workers extract a fact and a goal from it and summarise the room (the fake
upstream is scripted to answer with A's distinctive string, so A's data is recognisable
anywhere). Then user B, an ordinary member:

- tries every operation of the API (enumerated from /openapi.json, bodies built from its
  schemas) with A's ids in every path parameter and A's secret in every required query:
  never a 2xx, never A's data in an answer, and A's data still there afterwards;
- lists and searches what B may see: nothing of A's;
- listens to /v1/events on the other API worker while A chats: none of A's events;
- chats in their own room: no prompt sent to the model for B's messages, including those the
  job workers send for B's extraction and summaries, holds A's data; B's question is not
  answered from A's cached answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from sqlalchemy import func, select, text

from eko.store.db import Database
from eko.store.memory_models import MemoryItem, Summary
from eko.store.models import RoomMember
from eko_bench.load.schema_instance import minimal_instance
from tests.jobs.conftest import empty_procrastinate
from tests.jobs.test_cross_process import cluster, new_room, pro_user

pytestmark = [pytest.mark.slow, pytest.mark.processes]

SECRET = "Zanzibar-7781"  # A's: must never reach B
B_MARK = "Quokka-4410"  # B's: finds the prompts made for B
# A thumbs up its answer: a memory guard entry in A's private scope.
CACHED_QUESTION = "Quelle est la capitale de l'Australie ?"
# What A's data looks like (B's requests carry SECRET alone, which an error may echo).
A_TEXTS = (
    f"locker code is {SECRET}",
    f"whether the {SECRET}",
    f"casier est {SECRET}",
    "Alice gave",
)
# Path parameters that name something of A's.
OWNED_PARAM = re.compile(
    r"\{(room_id|message_id|item_id|entry_id|public_id|public_user_id|user_id|job_id)\}"
)


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


def extraction_answer(subject: str, code: str) -> dict[str, Any]:
    return {
        "items": [
            {
                "kind": "fact",
                "subject": subject,
                "content": f"{subject}'s locker code is {code}",
                "confidence": 0.95,
            },
            {
                "kind": "goal",
                "subject": subject,
                "content": f"Ask {subject} whether the {code} locker was emptied",
                "confidence": 0.9,
            },
        ],
        "answered_goals": [],
    }


SUMMARY_ANSWER = {
    "conversation_summary": f"Alice gave her locker code {SECRET}.",
    "actions_summary": f"Remembered the locker code {SECRET}.",
    "topics": [f"locker {SECRET}"],
}


async def settled(database: Database, *, timeout_s: float = 90) -> dict[str, int]:
    """Job counts by status once none is waiting or running."""
    deadline = time.monotonic() + timeout_s
    while True:
        async with database.engine.connect() as connection:
            rows = (
                await connection.execute(
                    text("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY status")
                )
            ).all()
        counts = {str(status): int(n) for status, n in rows}
        if not (counts.get("todo") or counts.get("doing")) or time.monotonic() > deadline:
            return counts
        await asyncio.sleep(0.5)


async def count_rows(database: Database, model: Any, *where: Any) -> int:
    async with database.session() as session:
        return int(
            (
                await session.execute(select(func.count()).select_from(model).where(*where))
            ).scalar_one()
        )


async def rooms_of(database: Database, user_id: int) -> set[str]:
    async with database.session() as session:
        rows = await session.execute(
            select(RoomMember.room_id).where(RoomMember.user_id == user_id)
        )
        return {str(room_id) for room_id in rows.scalars()}


def operations(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path template, operation) for every documented operation."""
    found = []
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                found.append((method.upper(), path, operation))
    return found


def request_body(openapi: dict[str, Any], operation: dict[str, Any]) -> Any:
    """A minimal valid body from the operation's JSON schema (None when it takes none)."""
    content = (operation.get("requestBody") or {}).get("content") or {}
    schema = (content.get("application/json") or {}).get("schema")
    if schema is None:
        return None
    return minimal_instance({**schema, "components": openapi.get("components", {})})


def fill_path(path: str, operation: dict[str, Any], ids: dict[str, str]) -> str:
    """Every {param} replaced by A's id of that kind; other parameters get the first value
    their schema allows (an enum's first), else A's secret."""
    schemas = {
        p["name"]: p.get("schema") or {}
        for p in operation.get("parameters", [])
        if p.get("in") == "path"
    }

    def value(name: str) -> str:
        if name in ids:
            return ids[name]
        schema = schemas.get(name, {})
        return str(minimal_instance(schema)) if "enum" in schema else SECRET

    return re.sub(r"\{(\w+)\}", lambda m: value(m.group(1)), path)


def query(operation: dict[str, Any]) -> dict[str, str]:
    return {
        p["name"]: SECRET
        for p in operation.get("parameters", [])
        if p.get("in") == "query" and p.get("required")
    }


async def test_user_b_never_reaches_user_a_across_processes(pg: Database, tmp_path: Path) -> None:
    settings = {
        "EKO_SUMMARIES_ENABLED": "true",
        "EKO_SUMMARIZE_EVERY_N_CHARS": "50",
    }
    async with cluster(
        pg, tmp_path, latency_s=0.05, job_workers=2, extraction=True, settings=settings
    ) as running:
        assert running.upstream is not None
        upstream = running.upstream
        await upstream.script(
            schema="MemoryExtraction", when=SECRET, answer=extraction_answer("Alice", SECRET)
        )
        await upstream.script(schema="L1Summary", when=SECRET, answer=SUMMARY_ANSWER)
        alice, a_headers = await pro_user(pg, "alice")
        bob, b_headers = await pro_user(pg, "bob")
        a_room = await new_room(pg, alice)
        b_room = await new_room(pg, bob)
        bob_ws_url = running.api[1].replace("http://", "ws://") + "/v1/events"
        async with (
            websockets.connect(bob_ws_url, additional_headers=b_headers) as bob_ws,
            httpx.AsyncClient(timeout=60) as client,
        ):
            assert json.loads(await asyncio.wait_for(bob_ws.recv(), 10))["type"] == (
                "stream.connected"
            )

            # A chats through worker 0; the job workers extract and summarise.
            async def post(base: str, room: str, content: str, headers: Any) -> Any:
                posted = await client.post(
                    f"{base}/v1/rooms/{room}/messages", json={"content": content}, headers=headers
                )
                assert posted.status_code == 201, posted.text
                return posted.json()

            a_messages = [
                await post(running.api[0], a_room, content, a_headers)
                for content in (
                    CACHED_QUESTION,
                    f"Mon code de casier est {SECRET}, retiens-le.",
                    f"Et rappelle-moi le code {SECRET} demain matin.",
                )
            ]
            jobs = await settled(pg)
            assert jobs.get("failed", 0) == 0, jobs
            # A's data exists: a fact and a goal, a summary, all in A's private scopes.
            assert await count_rows(pg, MemoryItem, MemoryItem.content.contains(SECRET)) >= 2
            assert await count_rows(pg, Summary, Summary.room_id == a_room) >= 1
            a_reply = a_messages[0]["assistant_message"]
            feedback = await client.post(
                f"{running.api[0]}/v1/messages/{a_reply['id']}/feedback",
                json={"rating": "up"},
                headers=a_headers,
            )
            assert feedback.status_code == 200, feedback.text
            assert feedback.json()["learned"], feedback.json()
            # The control: A asking again is answered from A's memory guard entry.
            again = await post(running.api[1], a_room, CACHED_QUESTION, a_headers)
            assert again["assistant_message"]["type"] == "cached_response", again
            a_items = (
                await client.get(f"{running.api[0]}/v1/memory/items", headers=a_headers)
            ).json()
            a_item_ids = [i["id"] for i in a_items if SECRET in json.dumps(i)]
            assert a_item_ids, a_items
            async with pg.engine.connect() as connection:
                a_job = (
                    await connection.execute(text("SELECT min(id) FROM procrastinate_jobs"))
                ).scalar_one()
            ids = {
                "room_id": a_room,
                "message_id": a_reply["id"],
                "item_id": a_item_ids[0],
                "entry_id": feedback.json().get("entry_id") or SECRET,
                "public_id": alice.public_id,
                "public_user_id": alice.public_id,
                "user_id": alice.public_id,
                "job_id": str(a_job),
                "fact_key": "locker",
                "scope": f"user:{alice.public_id}",
            }

            # B tries every operation on A's ids, through both API workers.
            openapi = (await client.get(f"{running.api[0]}/openapi.json")).json()
            answers: list[tuple[str, str, int]] = []
            leaks: list[str] = []
            for index, (method, template, operation) in enumerate(operations(openapi)):
                if template.startswith("/v1/events"):
                    continue  # the stream: checked below
                base = running.api[index % 2]
                response = await client.request(
                    method,
                    base + fill_path(template, operation, ids),
                    params=query(operation),
                    json=request_body(openapi, operation),
                    headers=b_headers,
                )
                answers.append((method, template, response.status_code))
                # (A 404 may echo the ids and words B sent; A's data must not come back.)
                if any(a_text in response.text for a_text in A_TEXTS):
                    leaks.append(f"{method} {template} {response.status_code}")
            owned = [(m, t, s) for m, t, s in answers if OWNED_PARAM.search(t)]
            reached = [(m, t, s) for m, t, s in owned if 200 <= s < 300]
            # A's data is still there: B's deletes on A's ids removed nothing.
            assert await count_rows(pg, MemoryItem, MemoryItem.content.contains(SECRET)) >= 2
            assert await count_rows(pg, Summary, Summary.room_id == a_room) >= 1

            # B asks A's cached question: A's private entry is never served to B.
            b_cached = await post(running.api[0], b_room, CACHED_QUESTION, b_headers)
            # B chats in B's own room, asking what A told Eko.
            await upstream.script(
                schema="MemoryExtraction", when=B_MARK, answer=extraction_answer("Bob", B_MARK)
            )
            b_posted = await client.post(
                f"{running.api[1]}/v1/rooms/{b_room}/messages",
                json={"content": f"Mon code de casier est {B_MARK}, retiens-le."},
                headers=b_headers,
            )
            assert b_posted.status_code == 201, b_posted.text
            b_question = await client.post(
                f"{running.api[0]}/v1/rooms/{b_room}/messages",
                json={"content": f"Quel est mon code de casier ? ({B_MARK})"},
                headers=b_headers,
            )
            assert b_question.status_code == 201, b_question.text
            jobs = await settled(pg)
            b_events: list[dict[str, Any]] = []
            with contextlib.suppress(TimeoutError):
                while True:
                    b_events.append(json.loads(await asyncio.wait_for(bob_ws.recv(), 1.0)))
        prompts = await upstream.requests()

    assert leaks == [], leaks
    assert reached == [], reached
    # Every operation on A's ids answered 403/404, or 422 (a body the route refused first).
    assert {s for _, _, s in owned} <= {403, 404, 422}, owned
    assert sum(s in (403, 404) for _, _, s in owned) >= len(owned) // 2, owned
    assert jobs.get("failed", 0) == 0, jobs
    # B's stream: B's own events only.
    assert b_events, "B's stream received nothing, not even B's own messages"
    # (B's probes of routes that take no room — POST /v1/chat, /v1/chat/completions — create
    # and use rooms of B's own: their events are B's too. None of them is A's.)
    b_rooms = await rooms_of(pg, bob.id)
    assert b_room in b_rooms and a_room not in b_rooms
    assert all(e.get("room_id") in (None, *b_rooms) for e in b_events), b_events
    assert not any(a_text in json.dumps(b_events) for a_text in A_TEXTS)
    # B's answer was not A's cached one, and holds none of A's data.
    assert SECRET not in b_question.text
    assert b_question.json()["assistant_message"]["type"] != "cached_response"
    assert b_cached["assistant_message"]["type"] != "cached_response", b_cached
    # The model never saw A's data while working for B, in the API or the job workers.
    for_b = [p for p in prompts if B_MARK in p["text"]]
    assert {p["schema"] for p in for_b} >= {"MemoryExtraction"}, [p["schema"] for p in for_b]
    assert [p for p in for_b if SECRET in p["text"]] == []
    assert bob.id != alice.id
