"""Replies as Server-Sent Events on POST /v1/rooms/{id}/messages (in-process app, both backends)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sqlalchemy import select

from eko.llm.prompt_budget import InputCut
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest, ProviderResponse, Usage
from eko.store.models import LLMCall, Message, User
from tests.api.conftest import HarnessFactory


def parse_sse(body: str) -> list[tuple[str, Any]]:
    events = []
    for block in body.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def writer_model(
    deltas: Deltas, *, calls: list[ProviderRequest] | None = None, name: str = "function"
) -> FunctionModel:
    """No JSON for the orchestrator (its deterministic fallback routes); `deltas` for the writer."""

    def answer(request: ProviderRequest) -> str | Deltas:
        if request.json_schema is not None:
            return "not json"
        if calls is not None:
            calls.append(request)
        return deltas

    return FunctionModel(answer, name=name)


async def post_stream(h: Any, room_id: str, headers: dict[str, str], **body: Any) -> Any:
    return await h.client.post(
        f"/v1/rooms/{room_id}/messages",
        json={"content": "Raconte-moi quelque chose", **body},
        headers={**headers, "Accept": "text/event-stream"},
    )


async def test_a_streamed_reply_is_message_then_deltas_then_done(
    make_harness: HarnessFactory,
) -> None:
    writer_calls: list[ProviderRequest] = []
    model = writer_model(Deltas(("Il ", "était ", "une ", "fois.")), calls=writer_calls)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        subscription = await h.services.events.subscribe(max_queue=100)
        response = await post_stream(h, room_id, headers)
        assert response.status_code == 201
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(response.text)
        names = [name for name, _ in events]
        assert names == ["message", "delta", "delta", "delta", "delta", "done"]
        assert events[0][1]["content"] == "Raconte-moi quelque chose"
        assert "".join(data["text"] for name, data in events if name == "delta") == (
            "Il était une fois."
        )
        done = events[-1][1]
        assert done["source"] == "model"
        assert done["message"]["content"] == "Il était une fois."
        assert done["message"]["reply_to_id"] == events[0][1]["id"]
        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
        assert page["items"][-1]["content"] == "Il était une fois."
        assert len(writer_calls) == 1
        # A second tab sees the reply being written on the events stream.
        seen = []
        for _ in range(20):
            try:
                event = await asyncio.wait_for(subscription.get(), 0.2)
            except TimeoutError:
                break
            seen.append(event)
        subscription.close()
        deltas = [e.data for e in seen if e.type == "message.delta"]
        assert "".join(d["text"] for d in sorted(deltas, key=lambda d: d["index"])) == (
            "Il était une fois."
        )
        assert {d["reply_to_id"] for d in deltas} == {events[0][1]["id"]}


async def test_stream_query_parameter_and_json_unchanged_without_it(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[writer_model(Deltas(("Oui.",)))]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        streamed = await h.client.post(
            f"/v1/rooms/{room_id}/messages?stream=true", json={"content": "a"}, headers=headers
        )
        assert [name for name, _ in parse_sse(streamed.text)][-1] == "done"
        plain = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "b"}, headers=headers
        )
        assert plain.headers["content-type"] == "application/json"
        assert plain.json()["assistant_message"]["content"] == "Oui."


async def test_problems_before_storing_are_not_streams(make_harness: HarnessFactory) -> None:
    async with make_harness(max_message_chars=10) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await post_stream(h, room_id, headers, content="x" * 11)
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"


async def test_a_mid_stream_failure_stores_the_partial_reply_marked_incomplete(
    make_harness: HarnessFactory,
) -> None:
    broken = writer_model(Deltas(("Première ", "moitié ", "perdue"), fail_after=2))
    backup = FunctionModel.constant("never used", name="backup")
    async with make_harness(providers=[broken, backup]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        events = parse_sse((await post_stream(h, room_id, headers)).text)
        names = [name for name, _ in events]
        assert names == ["message", "delta", "delta", "error", "done"]
        assert events[3][1]["code"] == "stream_interrupted"
        stored = events[-1][1]["message"]
        assert stored["content"] == "Première moitié"
        assert stored["metadata"]["incomplete"] is True
        assert stored["metadata"]["truncated"] is True
        async with h.services.database.session() as session:
            calls = (
                await session.execute(select(LLMCall).where(LLMCall.purpose == "writer"))
            ).scalars()
            assert [(c.provider, c.outcome) for c in calls] == [("function", "error")]
            user_messages = (
                await session.execute(select(Message).where(Message.role == "user"))
            ).scalars()
            assert len(list(user_messages)) == 1  # never a lost user message


async def test_a_reconnect_gets_the_stored_reply_without_a_second_call(
    make_harness: HarnessFactory,
) -> None:
    writer_calls: list[ProviderRequest] = []
    model = writer_model(Deltas(("Une ", "seule ", "fois.")), calls=writer_calls)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        first = parse_sse((await post_stream(h, room_id, headers, client_message_id="k1")).text)
        again = parse_sse((await post_stream(h, room_id, headers, client_message_id="k1")).text)
        assert [name for name, _ in again] == ["message", "delta", "done"]
        assert again[1][1]["text"] == "Une seule fois."
        assert again[-1][1]["message"]["id"] == first[-1][1]["message"]["id"]
        assert len(writer_calls) == 1


async def test_a_reconnect_joins_the_reply_in_progress(make_harness: HarnessFactory) -> None:
    writer_calls: list[ProviderRequest] = []
    parts = tuple(f"mot{i} " for i in range(8))
    model = writer_model(Deltas(parts, delay_s=0.05), calls=writer_calls)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        first = asyncio.create_task(post_stream(h, room_id, headers, client_message_id="k2"))
        for _ in range(500):  # until the writer is called
            if writer_calls:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.12)  # a few deltas are out
        second = await post_stream(h, room_id, headers, client_message_id="k2")
        first_events = parse_sse((await first).text)
        second_events = parse_sse(second.text)
        for events in (first_events, second_events):
            text = "".join(data["text"] for name, data in events if name == "delta")
            assert text == "".join(parts).strip()
        # The joiner got the deltas so far replayed, then the rest one by one.
        assert sum(name == "delta" for name, _ in second_events) == len(parts)
        assert second_events[-1][1]["message"]["id"] == first_events[-1][1]["message"]["id"]
        assert len(writer_calls) == 1


async def test_a_paywall_answer_is_one_delta(make_harness: HarnessFactory) -> None:
    down = FunctionModel(lambda request: (_ for _ in ()).throw(AssertionError("called")))
    async with make_harness(providers=[down]) as h:
        public_id, headers = await h.user()
        async with h.services.database.session() as session:
            user = (
                await session.execute(select(User).where(User.public_id == public_id))
            ).scalar_one()
            user.free_quota_used = 8
        room_id = await h.direct_room(headers)
        events = parse_sse((await post_stream(h, room_id, headers)).text)
        assert [name for name, _ in events] == ["message", "delta", "done"]
        assert events[-1][1]["source"] == "paywall"
        assert events[1][1]["text"] == events[-1][1]["message"]["content"]
        assert down.requests == []


async def test_a_streamed_reply_stores_the_same_provenance_as_a_whole_one(
    make_harness: HarnessFactory,
) -> None:
    # The bundled model cut the prompt to fit its budget: a streamed reply says so too.
    cut = InputCut(
        budget_tokens=100, original_tokens=900, kept_tokens=98, dropped_messages=3, cut_chars=2500
    )

    def answer(request: ProviderRequest) -> str | ProviderResponse:
        if request.json_schema is not None:
            return "not json"
        return ProviderResponse(
            text="Un résumé.", usage=Usage(98, 2), model="served", truncated=True, input_cut=cut
        )

    async with make_harness(providers=[FunctionModel(answer)]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        streamed = parse_sse((await post_stream(h, room_id, headers)).text)[-1][1]["message"]
        whole = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Et encore ?"}, headers=headers
        )
        assert whole.headers["content-type"] == "application/json"
        plain = whole.json()["assistant_message"]
    keys = ("provider", "model", "usage", "truncated", "input_cut", "attempts", "fallback_used")
    provenance = {key: streamed["metadata"].get(key) for key in keys}
    assert provenance == {key: plain["metadata"].get(key) for key in keys}
    assert provenance["input_cut"] == cut.as_meta()
    assert streamed["content"] == plain["content"] == "Un résumé."
