"""An answer to the assistant's question (naming it) becomes a fact and closes the goal, in the
scope where it was answered only."""

from __future__ import annotations

import json

import pytest

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.lobby import store
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import orchestrator_json
from tests.lobby.kit import ScriptedReflection

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
ANSWER = "Corentin est dev chez lemlist"


class LearningModel:
    def __init__(self) -> None:
        self.reflection = ScriptedReflection()
        self.orchestrator = orchestrator_json()

    def __call__(self, request: ProviderRequest) -> str:
        title = str((request.json_schema or {}).get("title", ""))
        prompt = request.messages[-1].content
        if title == "ReflectionDecision":
            return self.reflection(request)
        if title == "MemoryExtraction":
            # Answers goal 1 when the exchange gives the answer and a Corentin goal is listed.
            answered = (
                [{"goal": 1, "answer": ANSWER}]
                if ANSWER in prompt and "Qui est Corentin ?" in prompt
                else []
            )
            return json.dumps({"items": [], "answered_goals": answered})
        if request.json_schema is not None:
            return self.orchestrator(request) if callable(self.orchestrator) else self.orchestrator
        return "Merci !"


async def test_an_answer_in_the_lobby_closes_the_goal_not_one_in_a_direct_room(
    backend: str, make_harness: HarnessFactory
) -> None:
    model = LearningModel()
    # Alice triggers twice: no limit per user here (tests/lobby/test_manual_trigger.py).
    async with make_harness(
        providers=[FunctionModel(model)],
        memory_extract_enabled=True,
        reflection_manual_interval_s=0,
    ) as h:
        _, alice = await h.user("alice")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        lobby_id = lobby["id"]
        direct = await h.direct_room(alice)
        items = h.services.memory.items
        goal = await items.remember(
            NewItem(kind="goal", subject="Corentin", content="Qui est Corentin ?"),
            scope=room_key(lobby_id),
        )
        await h.client.post(
            f"/v1/rooms/{lobby_id}/messages", json={"content": "salut"}, headers=alice
        )
        asked = await h.client.post(f"/v1/rooms/{lobby_id}/reflection/trigger", headers=alice)
        assert asked.json()["reflection"]["goal_id"] == goal.item.id
        asked_goal = await items.get(goal.item.id)
        assert asked_goal is not None and asked_goal.status == "asked"

        # Answered in a private room: the lobby's goal is not even shown to the extraction.
        await h.client.post(
            f"/v1/rooms/{direct}/messages", json={"content": f"Eko, {ANSWER}"}, headers=alice
        )
        await h.services.jobs.drain()
        asked_goal = await items.get(goal.item.id)
        assert asked_goal is not None and asked_goal.status == "asked"

        # Answered in the lobby, naming the assistant: a lobby fact, the goal closed.
        await h.client.post(
            f"/v1/rooms/{lobby_id}/messages", json={"content": f"Eko, {ANSWER}"}, headers=alice
        )
        await h.services.jobs.drain()
        closed = await items.get(goal.item.id)
        assert closed is not None and closed.status == "answered"
        fact = await items.get(closed.answer_item_id or "")
        assert fact is not None and fact.content == ANSWER and fact.scope == room_key(lobby_id)

        # The next reflection sees the question answered: the cooldown is back to its value.
        await h.client.post(f"/v1/rooms/{lobby_id}/reflection/trigger", headers=alice)
        async with h.services.database.session() as session:
            stats = await store.get_stats(session, room_id=lobby_id)
        assert stats is not None and stats.pending_goal_id is None
        assert stats.cooldown_s == h.settings.reflection_cooldown_s
