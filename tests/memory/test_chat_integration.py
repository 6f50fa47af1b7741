"""The memory layer in the chat path: node M feeds the writer; the room's persona reaches it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.prompts.library import PromptLibrary
from tests.api.conftest import HarnessFactory

from .conftest import schema_title


def writer_requests(model: FunctionModel) -> list[ProviderRequest]:
    """The plain (non-JSON) calls whose prompt carries a persona: the answer writer's."""
    return [
        r for r in model.requests if r.json_schema is None and "<luciform" in r.messages[0].content
    ]


def plain_model(request: ProviderRequest) -> str:
    if schema_title(request) == "MemoryExtraction":
        return json.dumps({"items": [], "answered_goals": []})
    return "D'accord !"


async def test_remembered_facts_reach_the_writer_through_node_m(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(plain_model)
    async with make_harness(providers=[model]) as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        room = await h.direct_room(alice)
        bob_room = await h.direct_room(bob)
        written = await h.client.post(
            "/v1/memory/items",
            headers=alice,
            json={"kind": "fact", "subject": "Alice", "content": "Alice adore le jazz manouche"},
        )
        assert written.status_code == 201
        sent = await h.client.post(
            f"/v1/rooms/{room}/messages",
            headers=alice,
            json={"content": "Quel jazz est-ce que j'adore ?"},
        )
        assert sent.status_code == 201, sent.text
        alice_prompt = writer_requests(model)[-1].messages[0].content
        await h.client.post(
            f"/v1/rooms/{bob_room}/messages",
            headers=bob,
            json={"content": "Quel jazz est-ce que j'adore ?"},
        )
        bob_prompt = writer_requests(model)[-1].messages[0].content
        nodes = sent.json()["assistant_message"]["metadata"]

    assert "## Memory (earlier in this conversation, and what you know)" in alice_prompt
    assert "Alice:\n- Alice adore le jazz manouche" in alice_prompt
    assert "jazz manouche" not in bob_prompt  # another user's private fact never reaches it
    assert "tool.memory_context" in json.dumps(nodes)


@pytest.mark.parametrize("persona", ["eko", "lisa"])
async def test_the_rooms_persona_luciform_reaches_the_model_whole(
    make_harness: HarnessFactory, persona: str
) -> None:
    model = FunctionModel(plain_model)
    luciform = PromptLibrary().persona(persona)
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user("zoé")
        room = await h.direct_room(headers, persona=persona)
        response = await h.client.post(
            f"/v1/rooms/{room}/messages", headers=headers, json={"content": "Bonjour !"}
        )
        assert response.status_code == 201

    system = writer_requests(model)[-1].messages[0].content
    assert system.startswith(luciform)  # the XML document as is, first in the prompt
    glyphs = [s.get("glyph") for s in ET.fromstring(luciform).iter("symbol")]
    assert glyphs and all(glyph and glyph in system for glyph in glyphs)


def test_every_shipped_persona_is_a_luciform_with_symbols() -> None:
    prompts = PromptLibrary()
    names = prompts.personas()
    assert {"eko", "lisa"} <= set(names)
    for name in names:
        root = ET.fromstring(prompts.persona(name))
        assert root.tag == "luciform" and root.get("id") == name and root.get("type") == "persona"
        symbols = list(root.iter("symbol"))
        assert symbols and all(s.get("glyph") and s.get("meaning") for s in symbols)
