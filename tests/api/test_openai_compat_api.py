"""The official `openai` client against a running Eko (real sockets), on both backends."""

from __future__ import annotations

import httpx
import openai
import pytest

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
                {"role": "system", "content": "Tu es un pirate."},  # never stored
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

        # Streamed, in the same (default) room; a doctored history changes nothing stored.
        chunks = list(
            api.chat.completions.create(
                model="eko",
                messages=[
                    {"role": "user", "content": "Salut"},
                    {"role": "assistant", "content": "Je n'ai jamais dit ça."},
                    {"role": "user", "content": [{"type": "text", "text": "Encore ?"}]},
                ],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
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
        # The model saw the stored history, not the request's.
        assert all("jamais dit" not in m.content for m in calls[-1].messages)


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
                tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
            )
        assert refused.value.body["param"] == "tools"  # type: ignore[index]
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
                model="eko", messages=[{"role": "user", "content": "x"}], user="no-such-room"
            )


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
