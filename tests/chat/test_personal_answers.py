"""A cache that can learn: a user's stored facts in the writer's prompt no longer make every
answer personal. Personal = the question is about the asker, or the answer repeats one of their
facts; those are never learned, and the feedback response says why."""

from __future__ import annotations

from typing import Any

from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, send

ANSWERS = {
    "Quelle est la capitale du Pérou ?": "La capitale du Pérou est Lima.",
    "Quel est mon prénom ?": "Tu t'appelles comme tu veux !",
    "Comment aller à la gare ?": "Depuis Lyon, prends le tram T1.",
}


def writer(request: ProviderRequest) -> str:
    asked = str(request.messages[-1].content)
    return next((answer for question, answer in ANSWERS.items() if question in asked), "Hein ?")


async def thumbs_up(h: Any, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    message_id = body["assistant_message"]["id"]
    response = await h.client.post(
        f"/v1/messages/{message_id}/feedback", json={"rating": "up"}, headers=headers
    )
    assert response.status_code == 200, response.text
    verdict: dict[str, Any] = response.json()
    return verdict


async def test_a_user_with_facts_can_teach_a_general_answer(make_harness: HarnessFactory) -> None:
    model = engine_model(writer=writer)
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)  # Marie, Lyon: the intro is over
        first = await send(h, room_id, headers, "Quelle est la capitale du Pérou ?")
        meta = first["assistant_message"]["metadata"]
        # The facts were in the prompt (reported), but the answer does not use them.
        assert "facts" in meta["personal_context_sources"]
        assert meta["nodes"]["D"]["data"]["answer_uses_facts"] == []
        verdict = await thumbs_up(h, headers, first)
        assert verdict["learned"] is True and verdict["refused"] is None
        calls = len(model.requests)
        again = await send(h, room_id, headers, "Quelle est la capitale du Pérou ?")
        assert again["assistant_message"]["type"] == "cached_response"
        assert again["assistant_message"]["content"] == "La capitale du Pérou est Lima."
        assert len(model.requests) == calls


async def test_answers_about_the_user_or_repeating_their_facts_are_never_learned(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[engine_model(writer=writer)]) as h:
        _, headers, room_id = await known_user(h)
        mine = await send(h, room_id, headers, "Quel est mon prénom ?")
        assert "about_the_user" in mine["assistant_message"]["metadata"]["personal_context_sources"]
        verdict = await thumbs_up(h, headers, mine)
        assert verdict["learned"] is False and verdict["refused"] == "about_the_user"
        assert "about the user" in verdict["refused_reason"]

        route = await send(h, room_id, headers, "Comment aller à la gare ?")
        data = route["assistant_message"]["metadata"]["nodes"]["D"]["data"]
        assert data["answer_uses_facts"] == ["main_city"]
        verdict = await thumbs_up(h, headers, route)
        assert verdict["learned"] is False and verdict["refused"] == "uses_user_facts"
        assert "stored facts" in verdict["refused_reason"]
        # Asked again: the model answers (nothing was cached).
        again = await send(h, room_id, headers, "Comment aller à la gare ?")
        assert again["assistant_message"]["type"] != "cached_response"
