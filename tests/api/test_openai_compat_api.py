"""The official `openai` client against a running Eko (real sockets), on both backends."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import numpy as np
import openai
import pytest

from eko.embed.hashing import HashEmbedder
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import LiveEko, running_eko

QUESTION = "How do I export my calendar to Outlook?"


def writer(deltas: Deltas, calls: list[ProviderRequest] | None = None) -> FunctionModel:
    def answer(request: ProviderRequest) -> str | Deltas:
        if request.json_schema is not None:
            return "not json"  # the orchestrator's deterministic fallback routes
        if calls is not None:
            calls.append(request)
        return deltas

    return FunctionModel(answer)


def client(eko: LiveEko, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{eko.url}/v1", api_key=key or eko.key, max_retries=0)


def stored(eko: LiveEko, room_id: str) -> list[dict]:
    page = httpx.get(f"{eko.url}/v1/rooms/{room_id}/messages", headers=eko.headers).json()
    return list(page["items"])


def test_models_and_completions_whole_and_streamed(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [writer(Deltas(("Bon", "jour ", "à ", "toi.")), calls)]) as eko:
        api = client(eko)
        assert [m.id for m in api.models.list()] == ["eko", "lisa"]
        assert api.models.retrieve("lisa").owned_by == "eko"

        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[
                {"role": "system", "content": "Tu es un pirate."},  # the room's instructions
                {"role": "user", "content": "Salut"},
            ],
            temperature=0.2,
        )
        completion = raw.parse()
        room_id = raw.headers["x-eko-room"]
        assert raw.headers["x-eko-ignored-params"] == "temperature"
        assert completion.object == "chat.completion" and completion.model == "eko"
        assert completion.choices[0].message.content == "Bonjour à toi."
        assert completion.choices[0].finish_reason == "stop"
        llm_calls = httpx.get(f"{eko.url}/v1/rooms/{room_id}/llm-calls", headers=eko.headers).json()
        assert completion.usage is not None
        assert completion.usage.prompt_tokens == sum(c["input_tokens"] for c in llm_calls) > 0
        assert completion.usage.completion_tokens == sum(c["output_tokens"] for c in llm_calls)

        # The system message reached the writer's prompt, under the persona.
        system = calls[-1].messages[0]
        assert system.role == "system" and "Tu es un pirate." in system.content
        assert system.content.index("Tu es un pirate.") > 0

        # Streamed, the same conversation continued: the same room, only the new turn stored.
        stream = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[
                {"role": "system", "content": "Tu es un pirate."},
                {"role": "user", "content": "Salut"},
                {"role": "assistant", "content": "Bonjour à toi."},
                {"role": "user", "content": [{"type": "text", "text": "Encore ?"}]},
            ],
            stream=True,
            stream_options={"include_usage": True},
        )
        assert stream.headers["x-eko-room"] == room_id
        chunks = list(stream.parse())
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "Bonjour à toi."
        assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 4
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
        history = [(m["role"], m["content"]) for m in stored(eko, room_id)]
        assert history == [
            ("user", "Salut"),
            ("assistant", "Bonjour à toi."),
            ("user", "Encore ?"),
            ("assistant", "Bonjour à toi."),
        ]
        assert "Tu es un pirate." in calls[-1].messages[0].content

        # A doctored history is another conversation: a new room, its turns imported.
        doctored = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[
                {"role": "user", "content": "Salut"},
                {"role": "assistant", "content": "Je n'ai jamais dit ça."},
                {"role": "user", "content": "Encore ?"},
            ],
        )
        other = doctored.headers["x-eko-room"]
        assert other != room_id
        assert [(m["role"], m["content"]) for m in stored(eko, room_id)] == history
        assert [
            (m["role"], m["content"], m["metadata"].get("imported")) for m in stored(eko, other)
        ] == [
            ("user", "Salut", True),
            ("assistant", "Je n'ai jamais dit ça.", True),
            ("user", "Encore ?", None),
            ("assistant", "Bonjour à toi.", None),
        ]
        # No system message this time: no instructions.
        assert "Tu es un pirate." not in calls[-1].messages[0].content
        assert any("jamais dit" in m.content for m in calls[-1].messages)


def test_errors_come_in_openai_shape(database_url: str) -> None:
    with running_eko(database_url, [writer(Deltas(("Oui.",)))]) as eko:
        with pytest.raises(openai.AuthenticationError):
            client(eko, key="eko_wrong").models.list()
        api = client(eko)
        with pytest.raises(openai.NotFoundError, match=r"model_not_found|does not exist"):
            api.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.BadRequestError) as refused:
            api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "x"}],
                functions=[{"name": "f", "parameters": {}}],  # the legacy shape
            )
        assert refused.value.body["param"] == "functions"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError, match="n must be 1"):
            api.chat.completions.create(
                model="eko", messages=[{"role": "user", "content": "x"}], n=2
            )
        with pytest.raises(openai.BadRequestError, match="last message"):
            api.chat.completions.create(
                model="eko", messages=[{"role": "assistant", "content": "x"}]
            )
        with pytest.raises(openai.NotFoundError, match="room"):
            api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "x"}],
                metadata={"eko_room": "no-such-room"},
            )
        with pytest.raises(openai.NotFoundError, match="room"):
            api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "x"}],
                extra_headers={"X-Eko-Room": "no-such-room"},
            )
        # A refused message leaves no room behind (it is checked before its room is made).
        rooms_before = httpx.get(f"{eko.url}/v1/rooms", headers=eko.headers).json()
        with pytest.raises(openai.BadRequestError) as empty:
            api.chat.completions.create(
                model="eko",
                messages=[
                    {"role": "user", "content": "Avant"},
                    {"role": "assistant", "content": "Oui."},
                    {"role": "user", "content": "   "},
                ],
            )
        assert empty.value.body["code"] == "empty_message"  # type: ignore[index]
        assert httpx.get(f"{eko.url}/v1/rooms", headers=eko.headers).json() == rooms_before
        # A URL the app refuses before the route (a NUL): a 422, in OpenAI's shape.
        with pytest.raises(openai.UnprocessableEntityError) as unprocessable:
            api.models.retrieve("e\x00ko")
        assert unprocessable.value.body["code"] == "validation_error"  # type: ignore[index]
        assert unprocessable.value.response.json()["error"]["type"] == "invalid_request_error"


def test_a_body_over_the_limit_is_a_413_in_openai_shape(database_url: str) -> None:
    with running_eko(database_url, [writer(Deltas(("Oui.",)))], max_body_bytes=4096) as eko:
        with pytest.raises(openai.APIStatusError) as too_large:
            client(eko).chat.completions.create(
                model="eko", messages=[{"role": "user", "content": "x" * 5000}]
            )
        assert too_large.value.status_code == 413
        error = too_large.value.response.json()["error"]
        assert error["code"] == "payload_too_large" and "4096" in error["message"]
        assert error["type"] == "invalid_request_error"
        assert too_large.value.response.headers["content-type"] == "application/json"


def test_a_cached_answer_spends_no_completion_tokens(database_url: str) -> None:
    with running_eko(database_url, [writer(Deltas(("Modèle.",)))]) as eko:
        created = httpx.post(
            f"{eko.url}/v1/staff/memory",
            json={"question": QUESTION, "answer": "Use File > Export."},
            headers={"Authorization": f"Bearer {eko.staff_key}"},
        )
        assert created.status_code == 201, created.text
        completion = client(eko).chat.completions.create(
            model="eko", messages=[{"role": "user", "content": QUESTION}]
        )
        assert completion.choices[0].message.content == "Use File > Export."
        assert completion.usage is not None and completion.usage.completion_tokens == 0


def test_a_mid_stream_failure_raises_in_the_client_and_keeps_the_partial(
    database_url: str,
) -> None:
    broken = writer(Deltas(("Début ", "de ", "réponse"), fail_after=2))
    with running_eko(database_url, [broken]) as eko:
        api = client(eko)
        raw = api.chat.completions.with_raw_response.create(
            model="eko", messages=[{"role": "user", "content": "Vas-y"}], stream=True
        )
        room_id = raw.headers["x-eko-room"]
        seen: list[str] = []
        with pytest.raises(openai.APIError, match="mid-way"):
            for chunk in raw.parse():
                seen += [c.delta.content or "" for c in chunk.choices]
        assert "".join(seen) == "Début de"
        reply = stored(eko, room_id)[-1]
        assert reply["content"] == "Début de"
        assert reply["metadata"]["incomplete"] is True


def echo_writer(calls: list[ProviderRequest]) -> FunctionModel:
    """Answers "Vu: <the user's message>", and keeps what the writer was sent."""

    def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return "not json"
        calls.append(request)
        said = request.messages[-1].content.split("\n\n(")[0]  # without the language note
        return f"Vu: {said}"

    return FunctionModel(answer)


def turns_seen(request: ProviderRequest) -> str:
    return " ".join(m.content for m in request.messages if m.role != "system")


async def test_parallel_conversations_from_one_key_never_see_each_other(
    database_url: str,
) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [echo_writer(calls)]) as eko:
        api = openai.AsyncOpenAI(base_url=f"{eko.url}/v1", api_key=eko.key, max_retries=0)

        async def converse(tag: str, *, stream: bool) -> tuple[set[str], list[dict[str, str]]]:
            messages: list[dict[str, str]] = []
            rooms = set()
            for turn in range(3):
                messages.append({"role": "user", "content": f"{tag}-{turn} bonjour"})
                raw: Any = await api.chat.completions.with_raw_response.create(
                    model="eko",
                    messages=messages,  # type: ignore[arg-type]
                    stream=stream,
                )
                if stream:
                    chunks = [chunk async for chunk in raw.parse()]
                    reply = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                else:
                    reply = raw.parse().choices[0].message.content or ""
                assert reply == f"Vu: {tag}-{turn} bonjour"
                rooms.add(raw.headers["x-eko-room"])
                messages.append({"role": "assistant", "content": reply})
            return rooms, messages

        (rooms_a, sent_a), (rooms_b, sent_b) = await asyncio.gather(
            converse("alpha", stream=False), converse("beta", stream=True)
        )
        await api.close()
        assert len(rooms_a) == len(rooms_b) == 1 and rooms_a != rooms_b
        for room, sent in ((rooms_a.pop(), sent_a), (rooms_b.pop(), sent_b)):
            # Each turn stored once, in its own room.
            assert [(m["role"], m["content"]) for m in stored(eko, room)] == [
                (m["role"], m["content"]) for m in sent
            ]
        assert len(calls) == 6
        for request in calls:
            seen = turns_seen(request)
            assert ("alpha" in seen) != ("beta" in seen), seen
        # The third turn of each saw its two earlier turns.
        assert any("alpha-0" in turns_seen(c) and "alpha-2" in turns_seen(c) for c in calls)
        assert any("beta-0" in turns_seen(c) and "beta-2" in turns_seen(c) for c in calls)


def test_an_earlier_conversation_reaches_the_model_and_user_is_the_end_user(
    database_url: str,
) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [echo_writer(calls)]) as eko:
        api = client(eko)
        me = httpx.get(f"{eko.url}/v1/me", headers=eko.headers).json()
        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[
                {"role": "user", "content": "Je m'appelle Zorglub42"},
                {"role": "assistant", "content": "Enchanté, Zorglub42 !"},
                {"role": "user", "content": "Comment je m'appelle ?"},
            ],
            user="end-user-123",  # an end user of the caller's app, not a room: no 404
        )
        assert raw.parse().choices[0].message.content == "Vu: Comment je m'appelle ?"
        assert "Zorglub42" in turns_seen(calls[-1])
        room_id = raw.headers["x-eko-room"]
        messages = stored(eko, room_id)
        assert [(m["role"], m["metadata"].get("imported")) for m in messages] == [
            ("user", True),
            ("assistant", True),
            ("user", None),
            ("assistant", None),
        ]
        assert messages[2]["metadata"]["end_user"] == "end-user-123"
        # Imported history is not counted against the quota: one message, one count.
        after = httpx.get(f"{eko.url}/v1/me", headers=eko.headers).json()
        assert after["free_quota_used"] == me["free_quota_used"] + 1


def test_no_answer_is_a_503_in_openai_shape_never_a_stop(database_url: str) -> None:
    def down(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return "not json"
        raise ProviderUnavailable("function", "down (scripted)")

    with running_eko(database_url, [FunctionModel(down)]) as eko:
        api = client(eko)
        with pytest.raises(openai.InternalServerError) as failed:
            api.chat.completions.create(model="eko", messages=[{"role": "user", "content": "Hé"}])
        assert failed.value.status_code == 503
        assert failed.value.response.headers["retry-after"] == "5"
        assert failed.value.body["code"] == "model_unavailable"  # type: ignore[index]
        assert failed.value.body["type"] == "server_error"  # type: ignore[index]
        with pytest.raises(openai.APIError, match="No model could answer"):
            for _chunk in api.chat.completions.create(
                model="eko", messages=[{"role": "user", "content": "Hé"}], stream=True
            ):
                pass


def test_embeddings_from_the_configured_embedder(database_url: str) -> None:
    with running_eko(database_url, [writer(Deltas(("Oui.",)))]) as eko:
        api = client(eko)
        texts = ["Bonjour le monde", "Exporter mon calendrier"]
        # The SDK asks for base64 by default; float explicitly.
        for result in (
            api.embeddings.create(model="hash-384", input=texts),
            api.embeddings.create(model="default", input=texts, encoding_format="float"),
        ):
            assert [d.index for d in result.data] == [0, 1]
            expected = [HashEmbedder().vector(text) for text in texts]
            for item, vector in zip(result.data, expected, strict=True):
                assert item.object == "embedding" and len(item.embedding) == 384
                assert np.allclose(item.embedding, vector, atol=1e-6)
            assert result.usage.prompt_tokens == 6 and result.model == "hash-384"
        single = api.embeddings.create(model="hash-384", input="Bonjour le monde")
        assert np.allclose(single.data[0].embedding, result.data[0].embedding)
        with pytest.raises(openai.NotFoundError, match="hash-384"):
            api.embeddings.create(model="text-embedding-3-small", input="x")
        with pytest.raises(openai.BadRequestError, match="empty"):
            api.embeddings.create(model="hash-384", input=["x", " "])
        with pytest.raises(openai.AuthenticationError):
            client(eko, key="eko_wrong").embeddings.create(model="hash-384", input="x")
        # The whole schema is built on first request: seconds on a busy machine.
        document = httpx.get(f"{eko.url}/openapi.json", timeout=60).json()
        operation = document["paths"]["/v1/embeddings"]["post"]
        assert "requestBody" in operation and "200" in operation["responses"]


def test_a_request_retried_with_its_idempotency_key_goes_to_the_same_room(
    database_url: str,
) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [echo_writer(calls)]) as eko:
        api = client(eko)
        first = [{"role": "user", "content": "Salut"}]
        second = [*first, {"role": "assistant", "content": "Vu: Salut"}]
        second.append({"role": "user", "content": "Encore"})
        rooms, ids = set(), set()
        for messages, key in ((first, "k-1"), (first, "k-1"), (second, "k-2"), (second, "k-2")):
            raw = api.chat.completions.with_raw_response.create(
                model="eko",
                messages=messages,  # type: ignore[arg-type]
                extra_headers={"Idempotency-Key": key},
            )
            rooms.add(raw.headers["x-eko-room"])
            ids.add(raw.parse().id)
        assert len(rooms) == 1 and len(ids) == 2
        assert [m["content"] for m in stored(eko, rooms.pop())] == [
            "Salut",
            "Vu: Salut",
            "Encore",
            "Vu: Encore",
        ]
        assert len(calls) == 2
