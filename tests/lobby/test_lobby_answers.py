"""In a lobby the assistant answers only when its persona's name is mentioned."""

from __future__ import annotations

from typing import Any

import pytest

from eko.llm.providers import FunctionModel
from tests.api.conftest import HarnessFactory

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def test_a_mention_gets_an_answer_and_a_non_mention_does_not(
    backend: str, make_harness: HarnessFactory
) -> None:
    async with make_harness(providers=[FunctionModel.constant("Salut !")]) as h:
        _, headers = await h.user("marie")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)).json()
        url = f"/v1/rooms/{lobby['id']}/messages"
        said: dict[str, Any] = {}
        for text in (
            "l'ekologie du projet",
            "voir https://eko.example.com",
            "écris à eko@example.com",
            "un eko-système",
            "Éko, tu es là ?",
            "@eko une question",
        ):
            response = await h.client.post(url, json={"content": text}, headers=headers)
            assert response.status_code in (200, 201), response.text
            said[text] = response.json().get("assistant_message")
    assert said["l'ekologie du projet"] is None
    assert said["voir https://eko.example.com"] is None
    assert said["écris à eko@example.com"] is None
    assert said["un eko-système"] is None
    assert said["Éko, tu es là ?"] is not None
    assert said["@eko une question"] is not None


async def test_a_mention_is_answered_with_the_last_20_lobby_messages(
    backend: str, make_harness: HarnessFactory
) -> None:
    model = FunctionModel.constant("Oui.")
    async with make_harness(providers=[model]) as h:
        _, marie = await h.user("marie")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=marie)).json()
        url = f"/v1/rooms/{lobby['id']}/messages"
        for n in range(1, 25):
            response = await h.client.post(
                url, json={"content": f"remarque numéro {n}"}, headers=marie
            )
            assert response.status_code in (200, 201), response.text
        response = await h.client.post(url, json={"content": "Eko, tu suis ?"}, headers=marie)
        answer = response.json()["assistant_message"]
        assert answer["type"] != "paywall"  # unanswered lobby messages cost no free quota
    # The conversation turns (the system prompt's recalled older turns may quote any message).
    prompt = "\n".join(m.content for m in model.requests[-1].messages if m.role != "system")
    # The mention is message 25: the 20 messages up to it are 6..25, so 5 is gone and 6 is there.
    assert "remarque numéro 6" in prompt
    assert "remarque numéro 24" in prompt
    assert "remarque numéro 5" not in prompt
