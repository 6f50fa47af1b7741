"""The lean path for a small local model, through a real server (real sockets).

The model declares what the bundled one declares: a small prompt budget (the writer's compact
prompt) and `prefers_compact_output` (routes by rules, greedy sampling). Posted through the
API, each message reaches the model in one call — the writer's — at temperature 0, with a
prompt that holds the question and nothing a 1.5B model would answer instead: no route, no
signals, no empty profile, no reply-language note unless the conversation changed language
or the message asks for another one. A remote-like model (no budget) keeps the seed's
orchestrator call and the full prompt.
"""

from __future__ import annotations

from typing import Any

import httpx

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import LiveEko, running_eko

FRENCH_NOTE = "(Réponds en français.)"


class Recorder:
    def __init__(self, *, small: bool) -> None:
        self.requests: list[ProviderRequest] = []
        self.model = FunctionModel(self.answer)
        if small:
            self.model.max_prompt_tokens = 1_280  # type: ignore[attr-defined]
            self.model.prefers_compact_output = True

    async def answer(self, request: ProviderRequest) -> str:
        self.requests.append(request)
        if request.json_schema is not None:
            return '{"intent": "general_question", "context_level": "light"}'
        return "Madrid." if "Spain" in request.messages[-1].content else "Lisbonne."

    def writer_calls(self) -> list[ProviderRequest]:
        return [r for r in self.requests if r.json_schema is None]


def post(client: httpx.Client, room_id: str, text: str) -> dict[str, Any]:
    response = client.post(f"/v1/rooms/{room_id}/messages", json={"content": text})
    assert response.status_code == 201, response.text
    reply: dict[str, Any] = response.json()["assistant_message"]
    return reply


def client_for(eko: LiveEko) -> httpx.Client:
    return httpx.Client(base_url=eko.url, headers=eko.headers, timeout=60)


def new_room(client: httpx.Client) -> str:
    room = client.post("/v1/rooms", json={"kind": "direct"})
    assert room.status_code == 201, room.text
    room_id: str = room.json()["id"]
    return room_id


def test_a_small_model_gets_one_lean_call_per_message(database_url: str) -> None:
    model = Recorder(small=True)
    with running_eko(database_url, [model.model]) as eko, client_for(eko) as client:
        room = new_room(client)
        first = post(client, room, "Quelle est la capitale de l'Espagne ?")
        post(client, room, "What is the capital of Spain?")
        post(client, room, "Et celle du Portugal ?")
        translation = post(client, room, "Traduis en anglais : la maison est bleue")
    calls = model.writer_calls()
    assert len(model.requests) == len(calls) == 4  # routed by rules: no orchestrator call
    assert first["metadata"]["orchestrator"]["call"] == {"router": "rules"}
    assert translation["metadata"]["orchestrator"]["intent"] == "general_question"
    assert all(call.temperature == 0.0 for call in calls)
    system = calls[0].messages[0].content
    assert "<luciform" in system and "Never invent facts about the user" in system
    for noise in ("intent:", "signals:", "name: unknown", "plan: pro", "# Mode: normal"):
        assert noise not in system
    # Alone in its language, the first message goes as written.
    assert calls[0].messages[-1].content == "Quelle est la capitale de l'Espagne ?"
    # After an English turn, a French message is told its language (against drift)…
    assert calls[2].messages[-1].content.endswith(FRENCH_NOTE)
    # … but a translation request is not: it names the language it wants, and the persona's
    # "answer in the language you are spoken to" is left out of its prompt alone.
    assert FRENCH_NOTE not in calls[3].messages[-1].content
    assert all("<language>" in call.messages[0].content for call in calls[:3])
    assert "<language>" not in calls[3].messages[0].content
    assert "<tone>" in calls[3].messages[0].content


def test_a_remote_model_keeps_the_orchestrator_and_the_full_prompt(database_url: str) -> None:
    model = Recorder(small=False)
    with running_eko(database_url, [model.model]) as eko, client_for(eko) as client:
        room = new_room(client)
        reply = post(client, room, "Quelle est la capitale de l'Espagne ?")
    routed = [r for r in model.requests if r.json_schema is not None]
    assert routed  # the orchestrator's model call (asked again once: this JSON is not its contract)
    assert reply["metadata"]["orchestrator"]["call"].get("router") is None
    (writer,) = model.writer_calls()
    assert writer.temperature == 0.7
    assert "intent: general_question" in writer.messages[0].content
    assert writer.messages[-1].content.endswith(FRENCH_NOTE)
