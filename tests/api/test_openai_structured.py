"""Structured output and tools through the official `openai` client against a running Eko
(real sockets), on both backends: JSON of the caller's schema, tool calls returned and their
results taken as the next request's input, in the same room."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import LiveEko, running_eko
from .openai_clients_model import client_model

CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def client(eko: LiveEko) -> Any:
    """The SDK's client (typed loosely: these tests send shapes its overloads do not spell)."""
    return openai.OpenAI(base_url=f"{eko.url}/v1", api_key=eko.key, max_retries=0)


def stored(eko: LiveEko, room_id: str) -> list[dict]:
    page = httpx.get(f"{eko.url}/v1/rooms/{room_id}/messages", headers=eko.headers).json()
    return list(page["items"])


def test_json_schema_and_json_object_give_valid_json(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        api = client(eko)
        for strict in (True, False):
            completion = api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "Donne-moi une ville."}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "city", "schema": CITY_SCHEMA, "strict": strict},
                },
            )
            assert json.loads(completion.choices[0].message.content or "") == {
                "name": "Paris",
                "population": 42,
            }
            assert completion.choices[0].finish_reason == "stop"
        # The model was told the schema, and given the caller's format to pass through.
        request = calls[-1]
        assert request.caller_format is not None and request.json_schema == CITY_SCHEMA
        assert '"population"' in request.messages[0].content
        # parse(): the SDK's own structured output, streamed too.
        obj = api.chat.completions.create(
            model="eko",
            messages=[{"role": "user", "content": "Un objet JSON."}],
            response_format={"type": "json_object"},
            stream=True,
        )
        text = "".join(c.choices[0].delta.content or "" for c in obj if c.choices)
        assert json.loads(text) == {}


def test_an_invalid_json_answer_is_re_asked_once_then_refused_honestly(
    database_url: str,
) -> None:
    answers = iter(['{"name": "Paris"}', '{"name": "Lyon", "population": 7}'])

    def model(request: ProviderRequest) -> str:
        if request.caller_format is None:
            return "not json"
        return next(answers, "still not json")

    with running_eko(database_url, [FunctionModel(model)]) as eko:
        api = client(eko)
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "city", "schema": CITY_SCHEMA},
        }
        completion = api.chat.completions.create(
            model="eko",
            messages=[{"role": "user", "content": "Une ville ?"}],
            response_format=response_format,
        )
        # The first answer missed `population`: re-asked with the error, the second is valid.
        assert json.loads(completion.choices[0].message.content or "")["name"] == "Lyon"
        # Never valid: no JSON is invented, the client gets the honest 503.
        with pytest.raises(openai.InternalServerError) as failed:
            api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "Une autre ?"}],
                response_format=response_format,
            )
        assert failed.value.body["code"] == "model_unavailable"  # type: ignore[index]


@pytest.mark.parametrize("native", [True, False], ids=["native", "grammar"])
def test_tools_calls_come_back_and_results_continue_the_same_room(
    database_url: str, native: bool
) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls, native=native)]) as eko:
        api = client(eko)
        messages: list[dict] = [{"role": "user", "content": "Quel temps à Paris ?"}]
        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=messages,
            tools=[WEATHER_TOOL],
        )
        first = raw.parse()
        room_id = raw.headers["x-eko-room"]
        choice = first.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content is None
        [call] = choice.message.tool_calls or []
        assert call.function.name == "get_weather"
        assert json.loads(call.function.arguments) == {"city": "Paris"}
        # The client runs the tool and sends its result: the same conversation, the same room.
        messages += [
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "18 °C, ensoleillé"},
        ]
        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=messages,
            tools=[WEATHER_TOOL],
        )
        second = raw.parse().choices[0]
        assert raw.headers["x-eko-room"] == room_id
        assert second.finish_reason == "stop"
        assert "18 °C, ensoleillé" in (second.message.content or "")
        # The model read its own call and the result, in order.
        seen = [m.content for m in calls[-1].messages if m.role != "system"]
        assert "get_weather" in seen[-2] and "18 °C" in seen[-1]
        history = stored(eko, room_id)
        assert [(m["role"], bool(m["tool_calls"])) for m in history] == [
            ("user", False),
            ("assistant", True),
            ("user", False),
            ("assistant", False),
        ]
        assert history[2]["metadata"]["tool_results"][0]["tool_call_id"] == call.id
        # A tool-call reply is never learned by the memory guard.
        assert history[1]["metadata"]["caller_format"] == "tools"


def test_tool_choice_required_named_and_none(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    other = {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
    }
    with running_eko(database_url, [client_model(calls)]) as eko:
        api = client(eko)
        named = api.chat.completions.create(
            model="eko",
            messages=[{"role": "user", "content": "Quelle heure ?"}],
            tools=[WEATHER_TOOL, other],
            tool_choice={"type": "function", "function": {"name": "get_time"}},
        )
        assert [c.function.name for c in named.choices[0].message.tool_calls or []] == ["get_time"]
        assert calls[-1].caller_format is not None
        assert calls[-1].caller_format.tool_choice == {
            "type": "function",
            "function": {"name": "get_time"},
        }
        # "none", with tools or without: prose, no tools offered.
        for tools in ([WEATHER_TOOL], None):
            plain = api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "Bonjour"}],
                tool_choice="none",
                **({"tools": tools} if tools else {}),
            )
            assert plain.choices[0].message.content == "Vu: Bonjour"
            assert calls[-1].caller_format is None
        # Streamed: the call comes as a tool_calls delta.
        chunks = list(
            api.chat.completions.create(
                model="eko",
                messages=[{"role": "user", "content": "Météo ?"}],
                tools=[WEATHER_TOOL],
                tool_choice="required",
                stream=True,
            )
        )
        deltas = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or []]
        assert [d.function.name for d in deltas] == ["get_weather"]
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"


def test_json_and_tool_replies_are_never_served_from_nor_learned_into_the_cache(
    database_url: str,
) -> None:
    question = "How do I export my calendar to Outlook?"
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        created = httpx.post(
            f"{eko.url}/v1/staff/memory",
            json={"question": question, "answer": "Use File > Export."},
            headers={"Authorization": f"Bearer {eko.staff_key}"},
        )
        assert created.status_code == 201, created.text
        api = client(eko)
        prose = api.chat.completions.create(
            model="eko", messages=[{"role": "user", "content": question}]
        )
        assert prose.choices[0].message.content == "Use File > Export."  # the cache serves
        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[{"role": "user", "content": question}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "c", "schema": CITY_SCHEMA},
            },
        )
        assert json.loads(raw.parse().choices[0].message.content) == {
            "name": "Paris",
            "population": 42,
        }
        called = api.chat.completions.create(
            model="eko", messages=[{"role": "user", "content": question}], tools=[WEATHER_TOOL]
        )
        assert called.choices[0].finish_reason == "tool_calls"
        assert len(calls) == 2  # both asked the model, not the cache
        # A thumbs up on the JSON reply learns nothing.
        reply = stored(eko, raw.headers["x-eko-room"])[-1]
        rated = httpx.post(
            f"{eko.url}/v1/messages/{reply['id']}/feedback",
            json={"rating": "up"},
            headers=eko.headers,
        )
        assert rated.status_code == 200, rated.text
        assert rated.json()["learned"] is False and rated.json()["refused"] == "caller_format"


def test_a_conversation_with_instructions_is_never_served_from_nor_learned_into_the_cache(
    database_url: str,
) -> None:
    question = "How do I export my calendar to Outlook?"
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        created = httpx.post(
            f"{eko.url}/v1/staff/memory",
            json={"question": question, "answer": "Use File > Export."},
            headers={"Authorization": f"Bearer {eko.staff_key}"},
        )
        assert created.status_code == 201, created.text
        api = client(eko)
        raw = api.chat.completions.with_raw_response.create(
            model="eko",
            messages=[
                {"role": "system", "content": "Answer like a pirate."},
                {"role": "user", "content": question},
            ],
        )
        assert raw.parse().choices[0].message.content != "Use File > Export."
        # The model wrote it, under the caller's instructions.
        assert len(calls) >= 1
        assert any("Answer like a pirate." in m.content for m in calls[-1].messages)
        reply = stored(eko, raw.headers["x-eko-room"])[-1]
        assert reply["metadata"]["caller_instructions"] is True
        assert reply["metadata"].get("answered_by") != "memory_guard"
        rated = httpx.post(
            f"{eko.url}/v1/messages/{reply['id']}/feedback",
            json={"rating": "up"},
            headers=eko.headers,
        )
        assert rated.status_code == 200, rated.text
        assert rated.json()["learned"] is False
        assert rated.json()["refused"] == "caller_instructions"
        # Without instructions, the same question is still the cache's.
        plain = api.chat.completions.create(
            model="eko", messages=[{"role": "user", "content": question}]
        )
        assert plain.choices[0].message.content == "Use File > Export."


def test_malformed_formats_tools_and_calls_are_400s_never_500s(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:

        def post(**body: Any) -> httpx.Response:
            return httpx.post(
                f"{eko.url}/v1/chat/completions",
                json={"model": "eko", "messages": [{"role": "user", "content": "x"}], **body},
                headers=eko.headers,
                timeout=30,
            )

        remote_ref = {"$ref": "http://127.0.0.1:9/schema.json"}  # never fetched
        for body, param in (
            ({"response_format": {"type": "xml"}}, "response_format.type"),
            ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
            (
                {"response_format": {"type": "json_schema", "json_schema": {"schema": remote_ref}}},
                "response_format.json_schema.schema",
            ),
            ({"tools": [{"type": "function", "function": "f"}]}, "tools[0]"),
            ({"tools": [{"type": "function", "function": {}}]}, "tools[0].function.name"),
            ({"tool_choice": "required"}, "tool_choice"),
            ({"tool_choice": {"type": "function", "function": "f"}}, "tool_choice"),
            (
                {
                    "tools": [{"type": "function", "function": {"name": "f"}}],
                    "tool_choice": {"type": "function", "function": {"name": "g"}},
                },
                "tool_choice",
            ),
            ({"tool_choice": 3}, "tool_choice"),
        ):
            refused = post(**body)
            assert refused.status_code == 400, (body, refused.text)
            assert refused.json()["error"]["param"].startswith(param), body
        # Odd tool calls in the history are kept as they came (no 500), and fingerprinted.
        odd = post(
            messages=[
                {"role": "user", "content": "a"},
                {"role": "assistant", "tool_calls": [{"function": "f"}, {"id": 1}]},
                {"role": "tool", "tool_call_id": "nope", "content": "r"},
                {"role": "user", "content": "b"},
            ]
        )
        assert odd.status_code == 200, odd.text
        assert calls == [calls[0]] and "[tool result nope: tool]" in " ".join(
            m.content for m in calls[0].messages
        )
