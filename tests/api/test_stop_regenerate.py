"""Stop a reply while it is written; regenerate a reply (versions kept, the latest shown)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select

from eko.guard.scope import Scope
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.guard_models import GuardEntry
from eko.store.models import Message
from tests.api.conftest import HarnessFactory

from .test_streaming_replies import parse_sse, post_stream, writer_model

QUESTION = "How do I export my calendar to Outlook?"


def versioned_model(calls: list[ProviderRequest]) -> FunctionModel:
    """Writer answers "Version 1.", "Version 2.", …; the orchestrator gets no JSON."""

    def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return "not json"
        calls.append(request)
        return f"Version {len(calls)}."

    return FunctionModel(answer)


async def test_stop_stores_what_was_produced_marked_stopped(make_harness: HarnessFactory) -> None:
    writer_calls: list[ProviderRequest] = []
    parts = tuple(f"mot{i} " for i in range(40))
    model = writer_model(Deltas(parts, delay_s=0.03), calls=writer_calls)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        streaming = asyncio.create_task(post_stream(h, room_id, headers))
        for _ in range(500):  # until the writer is called
            if writer_calls:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.15)
        async with h.services.database.session() as session:
            user_message = (
                await session.execute(select(Message).where(Message.role == "user"))
            ).scalar_one()
        stop = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{user_message.id}/stop", headers=headers
        )
        assert stop.status_code == 202, stop.text
        assert stop.json() == {"stopped": True, "relayed": False, "reply_to_id": user_message.id}
        events = parse_sse((await streaming).text)
        done = events[-1][1]["message"]
        assert done["metadata"]["stopped"] is True and done["metadata"]["truncated"] is True
        shown = "".join(data["text"] for name, data in events if name == "delta")
        assert done["content"] == shown.strip()
        assert 0 < len(done["content"]) < len("".join(parts).strip())
        # Stopping again (or a stored reply) is a clear 409.
        again = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{user_message.id}/stop", headers=headers
        )
        assert again.status_code == 409
        assert again.headers["content-type"] == "application/problem+json"


async def test_a_stop_reaches_the_api_process_writing_the_reply(
    make_harness: HarnessFactory, backend: str, monkeypatch: Any
) -> None:
    writer_calls: list[ProviderRequest] = []
    parts = tuple(f"mot{i} " for i in range(40))
    model = writer_model(Deltas(parts, delay_s=0.03), calls=writer_calls)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        streaming = asyncio.create_task(post_stream(h, room_id, headers))
        for _ in range(500):  # until the writer is called
            if writer_calls:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        async with h.services.database.session() as session:
            user_message = (
                await session.execute(select(Message).where(Message.role == "user"))
            ).scalar_one()
        # As if another API process had taken the stop request: not found in this one.
        monkeypatch.setattr(h.services.chat.live, "get", lambda _message_id: None)
        stop = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{user_message.id}/stop", headers=headers
        )
        done = parse_sse((await streaming).text)[-1][1]["message"]
    if backend == "sqlite":  # one process, an in-process bus: nobody else writes replies
        assert stop.status_code == 409
        assert "stopped" not in done["metadata"]
    else:  # PostgreSQL's bus reaches every API process; the one writing the reply stops it
        assert stop.status_code == 202, stop.text
        assert stop.json()["relayed"] is True
        assert done["metadata"]["stopped"] is True
        assert len(done["content"]) < len("".join(parts).strip())


async def test_only_the_sender_stops_or_regenerates(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        room_id = await h.direct_room(alice)
        posted = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Salut"}, headers=alice
        )
        reply_id = posted.json()["assistant_message"]["id"]
        _, bob = await h.user("bob")
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{reply_id}/regenerate", headers=bob
        )
        assert response.status_code == 404  # not his room: not even visible
        missing = await h.client.post(
            f"/v1/rooms/{room_id}/messages/nope/regenerate", headers=alice
        )
        assert missing.status_code == 404


async def test_regenerate_keeps_versions_and_shows_the_latest(make_harness: HarnessFactory) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        posted = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Salut"}, headers=headers
        )
        reply = posted.json()["assistant_message"]
        assert reply["content"] == "Version 1."
        second = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{reply['id']}/regenerate", headers=headers
        )
        assert second.status_code == 200, second.text
        assert second.json()["id"] == reply["id"]
        assert second.json()["content"] == "Version 2."
        assert second.json()["metadata"]["version"] == 2
        # By the user message id, and streamed this time.
        third = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{reply['reply_to_id']}/regenerate?stream=true",
            headers=headers,
        )
        events = parse_sse(third.text)
        assert [name for name, _ in events][-1] == "done"
        assert events[-1][1]["message"]["content"] == "Version 3."
        assert "".join(d["text"] for n, d in events if n == "delta") == "Version 3."

        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
        assert [(m["role"], m["content"]) for m in page["items"]] == [
            ("user", "Salut"),
            ("assistant", "Version 3."),
        ]
        assert page["items"][-1]["char_count"] == len("Version 3.")
        versions = (
            await h.client.get(
                f"/v1/rooms/{room_id}/messages/{reply['id']}/versions", headers=headers
            )
        ).json()
        assert [(v["version"], v["content"]) for v in versions["previous"]] == [
            (1, "Version 1."),
            (2, "Version 2."),
        ]
        assert versions["current"]["metadata"]["version"] == 3
        # The next turn sees only the latest version in its history.
        await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Et ensuite ?"}, headers=headers
        )
        history = [m.content for m in calls[-1].messages if m.role == "assistant"]
        assert history == ["Version 3."]


async def test_regenerate_skips_the_cache_and_retires_what_was_learned(
    make_harness: HarnessFactory,
) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, headers = await h.user()
        _, staff = await h.user("root", role="staff")
        created = await h.client.post(
            "/v1/staff/memory",
            json={"question": QUESTION, "answer": "Use File > Export."},
            headers=staff,
        )
        assert created.status_code == 201, created.text
        room_id = await h.direct_room(headers)
        cached = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": QUESTION}, headers=headers
            )
        ).json()["assistant_message"]
        assert cached["type"] == "cached_response" and calls == []
        # Pretend this reply had been learned too: regenerating rejects it.
        learned = await h.services.guard.learn(
            question="Another question about exports?",
            answer=cached["content"],
            scope=Scope(persona="eko"),
            source_message_id=cached["id"],
        )
        fresh = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{cached['id']}/regenerate", headers=headers
        )
        assert fresh.json()["content"] == "Version 1." and fresh.json()["type"] == "message"
        async with h.services.database.session() as session:
            entry = await session.get(GuardEntry, learned.entry.id)
            assert entry is not None and entry.status == "obsolete"
