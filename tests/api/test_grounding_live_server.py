"""Grounded answers through a real server over real sockets (scripted model, both backends):
in a fresh room, a question about the user's sister reaches the model with the note that memory
has nothing on it, and the invented answer is replaced in what the API returns (whole and
streamed) and in what is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.prompts.library import PromptLibrary

from .live_server import LiveEko, running_eko

INVENTED = "Your sister plays the piano and the violin."
NOTE = "# Memory has nothing on this question"


def inventing_model(seen: list[ProviderRequest]) -> FunctionModel:
    def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return "not json"  # the orchestrator falls back to its rules
        seen.append(request)
        return INVENTED

    return FunctionModel(answer)


def events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


def room(eko: LiveEko) -> str:
    response = httpx.post(f"{eko.url}/v1/rooms", json={"kind": "direct"}, headers=eko.headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def stored(eko: LiveEko, room_id: str, reply_id: str) -> dict[str, Any]:
    page = httpx.get(f"{eko.url}/v1/rooms/{room_id}/messages", headers=eko.headers).json()
    return dict(next(item for item in page["items"] if item["id"] == reply_id))


def test_an_invented_answer_about_the_user_is_corrected_over_http(database_url: str) -> None:
    seen: list[ProviderRequest] = []
    expected = PromptLibrary().text("writer/grounding/dont_know_en.md")
    with running_eko(database_url, [inventing_model(seen)]) as eko:
        room_id = room(eko)
        response = httpx.post(
            f"{eko.url}/v1/rooms/{room_id}/messages",
            json={"content": "What instruments does my sister play?"},
            headers=eko.headers,
            timeout=30,
        )
        assert response.status_code == 201, response.text
        reply = response.json()["assistant_message"]
        kept = stored(eko, room_id, reply["id"])

        # Streamed: the deltas show what the model wrote, the stored message (in `done`) is
        # the correction.
        with httpx.stream(
            "POST",
            f"{eko.url}/v1/rooms/{room(eko)}/messages?stream=true",
            json={"content": "What is my dog's name?"},
            headers=eko.headers,
            timeout=30,
        ) as streamed:
            assert streamed.status_code == 201
            done = next(data for name, data in events(streamed.iter_lines()) if name == "done")

    assert reply["content"] == expected
    assert kept["content"] == expected
    assert reply["metadata"]["grounding"]["flagged"] is True
    assert kept["metadata"]["grounding"]["original"] == INVENTED
    system = str(seen[0].messages[0].content)
    assert NOTE in system and "(sister)" in system
    assert done["message"]["content"] == expected
    assert done["message"]["metadata"]["grounding"]["subject"] == "pet"
    assert NOTE in str(seen[1].messages[0].content)
