"""The memory guard through the HTTP API: served with zero model calls, scoped, learned only
from validated answers, audited by staff."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from sqlalchemy import func, select

from eko.chat.pipeline import Draft, Turn, Writer
from eko.embed.base import EmbeddingError
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest, ProviderResponse, Usage
from eko.store.guard_models import GuardEntry
from tests.api.conftest import HarnessFactory
from tests.guard.conftest import age_entry

PROBLEM = "application/problem+json"
QUESTION = "How do I export my calendar to Outlook?"


def counting_model() -> FunctionModel:
    """A model whose every answer is different: a cached answer is recognisable."""
    count = iter(range(1, 10_000))
    return FunctionModel(lambda _request: f"Model answer number {next(count)}.")


class MetaWriter:
    """Wraps the configured writer and sets (or drops) metadata keys on its drafts, standing
    in for a chat engine that reports `intent` and `personal_context`."""

    def __init__(self, inner: Writer, *, drop: Iterable[str] = (), **meta: Any) -> None:
        self.inner, self.meta, self.drop = inner, meta, tuple(drop)

    async def write(self, turn: Turn) -> Draft:
        draft = await self.inner.write(turn)
        draft.meta.clear(*self.drop)
        draft.meta.set(**self.meta)
        return draft


def use_writer(h: Any, *, drop: Iterable[str] = (), **meta: Any) -> None:
    h.services.chat.writer = MetaWriter(h.services.chat.writer, drop=drop, **meta)


def restore_writer(h: Any) -> None:
    """Undo use_writer: the configured writer again."""
    writer = h.services.chat.writer
    assert isinstance(writer, MetaWriter)
    h.services.chat.writer = writer.inner


async def ask(h: Any, headers: dict[str, str], room_id: str, text: str) -> dict[str, Any]:
    response = await h.client.post(
        f"/v1/rooms/{room_id}/messages", json={"content": text}, headers=headers
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    assert body["assistant_message"] is not None
    return body


async def calls_for(h: Any, headers: dict[str, str], room_id: str, body: dict[str, Any]) -> list:
    response = await h.client.get(
        f"/v1/rooms/{room_id}/llm-calls",
        params={"message_id": body["user_message"]["id"]},
        headers=headers,
    )
    assert response.status_code == 200
    calls: list = response.json()
    return calls


async def rate(
    h: Any, headers: dict[str, str], body: dict[str, Any], rating: str = "up", **extra: Any
) -> Any:
    message_id = body["assistant_message"]["id"]
    return await h.client.post(
        f"/v1/messages/{message_id}/feedback", json={"rating": rating, **extra}, headers=headers
    )


async def entries(h: Any) -> int:
    async with h.services.database.session() as session:
        query = select(func.count()).select_from(GuardEntry)
        return int((await session.execute(query)).scalar_one())


async def test_repeated_question_is_answered_from_the_cache_without_any_model_call(
    make_harness: HarnessFactory,
) -> None:
    model = counting_model()
    async with make_harness(providers=[model]) as h:
        alice, alice_headers = await h.user("alice")
        room = await h.direct_room(alice_headers)
        first = await ask(h, alice_headers, room, QUESTION)
        assert first["assistant_message"]["type"] == "message"
        assert await calls_for(h, alice_headers, room, first)  # the model answered

        feedback = await rate(h, alice_headers, first, comment="parfait")
        assert feedback.status_code == 200, feedback.text
        verdict = feedback.json()
        assert verdict["learned"] is True and verdict["refused"] is None
        entry_id = verdict["entry_id"]
        requests_before = len(model.requests)

        again = await ask(h, alice_headers, room, "how do I export my calendar to outlook")
        reply = again["assistant_message"]
        assert reply["type"] == "cached_response"
        assert reply["content"] == first["assistant_message"]["content"]
        guard_meta = reply["metadata"]["memory_guard"]
        assert guard_meta["entry_id"] == entry_id and guard_meta["match"] == "exact"
        # A member's thumbs up is learned for that member alone (test_trust.py).
        assert guard_meta["score"] == 1.0 and guard_meta["scope"] == "private"
        assert reply["metadata"]["answered_by"] == "memory_guard"
        assert reply["metadata"]["action"] == "respond_from_memory"
        assert await calls_for(h, alice_headers, room, again) == []
        assert len(model.requests) == requests_before

        # A paraphrase in another room of the same persona: semantic hit, checked.
        other_room = await h.direct_room(alice_headers)
        close = await ask(
            h, alice_headers, other_room, "How do I export my calendar to Outlook please?"
        )
        assert close["assistant_message"]["type"] == "cached_response"
        meta = close["assistant_message"]["metadata"]["memory_guard"]
        assert meta["match"] == "semantic" and meta["check"]["passed"] is True
        assert meta["score"] >= meta["threshold"] == h.services.guard.threshold
        assert await calls_for(h, alice_headers, other_room, close) == []

        # The feedback is on the message, per user.
        page = (await h.client.get(f"/v1/rooms/{room}/messages", headers=alice_headers)).json()
        rated = next(m for m in page["items"] if m["id"] == first["assistant_message"]["id"])
        assert rated["metadata"]["feedback"][alice]["rating"] == "up"
        assert rated["metadata"]["feedback"][alice]["comment"] == "parfait"

        # Usage: one exact hit (+2) and one semantic hit (+1 or +2).
        _, staff_headers = await h.user("root", role="staff")
        shown = (await h.client.get(f"/v1/staff/memory/{entry_id}", headers=staff_headers)).json()
        assert shown["usage_count"] == 2 + (2 if meta["score"] >= 0.95 else 1)


@pytest.mark.parametrize(
    "reported",
    [
        {"drop": ["personal_context"]},
        {"personal_context": True, "personal_context_sources": ["history"]},
    ],
    ids=["unreported", "history-only"],
)
async def test_conversation_dependent_answers_are_private_to_the_asker(
    make_harness: HarnessFactory, reported: dict[str, Any]
) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        use_writer(h, **reported)
        alice_room = await h.direct_room(alice_headers)
        first = await ask(h, alice_headers, alice_room, QUESTION)
        assert (await rate(h, alice_headers, first)).json()["learned"] is True

        bob_room = await h.direct_room(bob_headers)
        bob = await ask(h, bob_headers, bob_room, QUESTION)
        assert bob["assistant_message"]["type"] != "cached_response"
        assert bob["assistant_message"]["content"] != first["assistant_message"]["content"]
        assert await calls_for(h, bob_headers, bob_room, bob)
        # Alice herself gets it back, in any room of this persona.
        again_room = await h.direct_room(alice_headers)
        mine = await ask(h, alice_headers, again_room, QUESTION)
        assert mine["assistant_message"]["type"] == "cached_response"
        assert mine["assistant_message"]["metadata"]["memory_guard"]["scope"] == "private"


async def test_shared_answers_cross_users_but_never_personas(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        _, staff_headers = await h.user("root", role="staff")
        use_writer(h, personal_context=False)
        alice_room = await h.direct_room(alice_headers)
        first = await ask(h, alice_headers, alice_room, QUESTION)
        # Staff validation publishes (a member's thumbs up would not: test_trust.py).
        validated = await h.client.post(
            "/v1/staff/memory/validate",
            json={"message_id": first["assistant_message"]["id"]},
            headers=staff_headers,
        )
        assert validated.status_code == 201, validated.text

        bob_room = await h.direct_room(bob_headers)
        bob = await ask(h, bob_headers, bob_room, QUESTION)
        assert bob["assistant_message"]["type"] == "cached_response"
        assert bob["assistant_message"]["metadata"]["memory_guard"]["scope"] == "shared"
        assert await calls_for(h, bob_headers, bob_room, bob) == []

        # Another persona is another tenant: the same question goes to the model.
        lisa_room = await h.direct_room(bob_headers, persona="lisa")
        lisa = await ask(h, bob_headers, lisa_room, QUESTION)
        assert lisa["assistant_message"]["type"] != "cached_response"
        assert await calls_for(h, bob_headers, lisa_room, lisa)


async def test_lobby_mention_is_not_part_of_the_question(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, headers = await h.user("alice")
        use_writer(h, personal_context=False)
        response = await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)
        lobby = response.json()["id"]
        first = await ask(h, headers, lobby, f"@Eko, {QUESTION}")
        assert (await rate(h, headers, first)).json()["learned"] is True
        room = await h.direct_room(headers)
        again = await ask(h, headers, room, QUESTION)
        assert again["assistant_message"]["metadata"]["memory_guard"]["match"] == "exact"


async def test_personal_invalid_truncated_and_fallback_answers_are_never_learned(
    make_harness: HarnessFactory,
) -> None:
    def answer(request: ProviderRequest) -> str | ProviderResponse:
        if request.json_schema is not None:
            return "not json"  # the orchestrator's structured call: it falls back by itself
        asked = [m.content for m in request.messages if m.role == "user"][-1]
        if "Tokyo" in asked:
            raise ProviderUnavailable("function", "down")
        if "sky" in asked:
            return "Ceci est faux <non valide>"
        if "history" in asked:
            return ProviderResponse("A long answer that stops", Usage(3, 5), "m", truncated=True)
        return "Your badge number is 4411."

    model = FunctionModel(answer)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user("alice")
        room = await h.direct_room(headers)
        # Remembered facts (node M) make an answer personal; the facts store alone does not
        # (tests/chat/test_personal_answers.py).
        use_writer(h, personal_context=True, personal_context_sources=["memory_facts"])
        personal = await ask(h, headers, room, "What is my badge number?")
        restore_writer(h)
        invalid = await ask(h, headers, room, "Is the sky green?")
        cut = await ask(h, headers, room, "Explain the whole history of France")
        down = await ask(h, headers, room, "What time is it in Tokyo?")
        assert down["assistant_message"]["type"] == "fallback"
        refusals = [
            (await rate(h, headers, body)).json()["refused"]
            for body in (personal, invalid, cut, down)
        ]
        assert refusals == [
            "personal_context",
            "marked_invalid",
            "truncated",
            "not_an_answer:fallback",
        ]
        assert await entries(h) == 0


async def test_feedback_rules_and_retraction(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        alice, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        room = await h.direct_room(alice_headers)
        body = await ask(h, alice_headers, room, QUESTION)

        # Not a member of the room: indistinguishable from a missing message.
        outsider = await rate(h, bob_headers, body)
        assert outsider.status_code == 404 and outsider.headers["content-type"] == PROBLEM
        missing = await h.client.post(
            "/v1/messages/nope/feedback", json={"rating": "up"}, headers=alice_headers
        )
        assert missing.status_code == 404
        user_message = await h.client.post(
            f"/v1/messages/{body['user_message']['id']}/feedback",
            json={"rating": "up"},
            headers=alice_headers,
        )
        assert user_message.status_code == 422
        assert user_message.json()["type"].endswith("not-an-answer")
        for bad in (
            {"rating": "meh"},
            {"rating": "up", "extra": 1},
            {"rating": "up", "comment": "x" * 1001},
        ):
            response = await h.client.post(
                f"/v1/messages/{body['assistant_message']['id']}/feedback",
                json=bad,
                headers=alice_headers,
            )
            assert response.status_code == 422
        assert await entries(h) == 0

        up = (await rate(h, alice_headers, body)).json()
        assert up["learned"] is True
        twice = (await rate(h, alice_headers, body)).json()
        assert twice["learned"] is False and twice["entry_id"] == up["entry_id"]
        assert await entries(h) == 1

        down = (await rate(h, alice_headers, body, "down")).json()
        assert down["retracted"] is True and down["entry_id"] == up["entry_id"]
        again = await ask(h, alice_headers, room, QUESTION)
        assert again["assistant_message"]["type"] != "cached_response"
        page = (await h.client.get(f"/v1/rooms/{room}/messages", headers=alice_headers)).json()
        rated = next(m for m in page["items"] if m["id"] == body["assistant_message"]["id"])
        assert rated["metadata"]["feedback"][alice]["rating"] == "down"


async def test_feedback_on_a_cached_answer_is_counted_on_its_entry(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()]) as h:
        _, headers = await h.user("alice")
        _, staff_headers = await h.user("root", role="staff")
        room = await h.direct_room(headers)
        first = await ask(h, headers, room, QUESTION)
        entry_id = (await rate(h, headers, first)).json()["entry_id"]
        cached = await ask(h, headers, room, QUESTION)
        assert cached["assistant_message"]["type"] == "cached_response"
        verdict = (await rate(h, headers, cached, "down")).json()
        assert verdict["entry_id"] == entry_id and verdict["learned"] is False
        await rate(h, headers, cached, "down")  # the same rating again: counted once
        shown = (await h.client.get(f"/v1/staff/memory/{entry_id}", headers=staff_headers)).json()
        assert shown["metadata"]["feedback"] == {"up": 0, "down": 1}
        assert shown["status"] == "active"


async def test_cacheable_intents_are_learned_automatically(make_harness: HarnessFactory) -> None:
    async with make_harness(
        providers=[counting_model()], guard_cacheable_intents=["general_question"]
    ) as h:
        _, alice_headers = await h.user("alice")
        _, bob_headers = await h.user("bob")
        alice_room = await h.direct_room(alice_headers)
        use_writer(h, intent="general_question", personal_context=False)
        first = await ask(h, alice_headers, alice_room, QUESTION)
        restore_writer(h)
        use_writer(h, intent="smalltalk", personal_context=False)
        await ask(h, alice_headers, alice_room, "Bonjour, comment vas-tu ?")
        restore_writer(h)
        use_writer(h, drop=["intent"], personal_context=False)
        await ask(h, alice_headers, alice_room, "What is the tallest building in Paris?")
        await h.services.jobs.drain()
        assert await entries(h) == 1

        bob_room = await h.direct_room(bob_headers)
        bob = await ask(h, bob_headers, bob_room, QUESTION)
        assert bob["assistant_message"]["type"] == "cached_response"
        assert bob["assistant_message"]["content"] == first["assistant_message"]["content"]


async def test_guard_off_expired_and_broken_embedder_fall_through_to_the_writer(
    make_harness: HarnessFactory, monkeypatch: Any
) -> None:
    async with make_harness(providers=[counting_model()], guard_max_age_days=30) as h:
        _, headers = await h.user("alice")
        _, staff_headers = await h.user("root", role="staff")
        created = await h.client.post(
            "/v1/staff/memory",
            json={"question": QUESTION, "answer": "Use File > Export."},
            headers=staff_headers,
        )
        assert created.status_code == 201, created.text
        room = await h.direct_room(headers)
        assert (await ask(h, headers, room, QUESTION))["assistant_message"]["type"] == (
            "cached_response"
        )

        async def broken(*_args: Any, **_kwargs: Any) -> Any:
            raise EmbeddingError("engine crashed")

        monkeypatch.setattr(h.services.embedder, "embed", broken)
        paraphrase = await ask(h, headers, room, "How can I export my calendar to Outlook?")
        assert paraphrase["assistant_message"]["content"].startswith("Model answer")
        # The exact question needs no vector: still served while the embedder is down.
        exact = await ask(h, headers, room, QUESTION)
        assert exact["assistant_message"]["type"] == "cached_response"
        monkeypatch.undo()

        await age_entry(h.services.database, created.json()["id"], days=31)
        expired = await ask(h, headers, room, QUESTION)
        assert expired["assistant_message"]["content"].startswith("Model answer")

    async with make_harness(providers=[counting_model()], guard_enabled=False) as h:
        _, headers = await h.user("bob")
        _, staff_headers = await h.user("root2", role="staff")
        await h.client.post(
            "/v1/staff/memory",
            json={"question": QUESTION, "answer": "Use File > Export."},
            headers=staff_headers,
        )
        room = await h.direct_room(headers)
        off = await ask(h, headers, room, QUESTION)
        assert off["assistant_message"]["content"].startswith("Model answer")
