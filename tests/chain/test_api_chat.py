"""POST /v1/chat: a reflexive message goes through the chain, a simple one does not; the
seed's shape comes back, is stored in the message's metadata, and every stage is in llm_calls."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from eko.chat.chain_writer import ChainWriter
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.models import LLMCall
from tests.api.conftest import Harness, HarnessFactory
from tests.chat.helpers import engine_model, known_user

PROBLEM = "application/problem+json"


def chain_and_engine_model() -> FunctionModel:
    """OL1 looks in memory then reports; M1 drafts; M2 answers; the engine as usual."""
    engine = engine_model(writer="Réponse simple.")

    def answer(request: ProviderRequest) -> Any:
        system = request.messages[0].content
        last = request.messages[-1].content
        if system.startswith("You are OL1"):
            if last.startswith("RESULT") or last.startswith("ERROR"):
                return "Facts: nothing remembered about cats."
            return '[TOOL:search_memories:{"query": "chat"}]'
        if system.startswith("You are M1"):
            return "Draft: a cat needs food and care."
        if system.startswith("You are M2"):
            return "Un chat a besoin de nourriture et d'attention."
        return engine._function(request)

    return FunctionModel(answer, name="scripted", model="scripted")


async def test_a_reflexive_message_is_answered_by_the_chain(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        _, headers, room_id = await known_user(h)
        response = await h.client.post(
            "/v1/chat",
            json={"message": "Analyse ce dont un chat a besoin", "room_id": room_id},
            headers=headers,
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["mode"] == "reflexive" and body["rule"] == "keyword:analyse"
        assert body["reply"] == "Un chat a besoin de nourriture et d'attention."
        assert [stage["node"] for stage in body["chain"]] == ["OL1", "M1", "M2"]
        assert [stage["turns"] for stage in body["chain"]] == [2, 1, 1]
        assert body["turns"] == 4
        assert body["tools_used"] == [
            {"name": "search_memories", "args": {"query": "chat"}, "result": [], "error": None}
        ]
        stored = await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)
        reply = stored.json()["items"][-1]
        assert reply["metadata"]["chain"]["turns"] == 4
        assert reply["metadata"]["complexity"] == {"mode": "reflexive", "rule": "keyword:analyse"}
        async with h.services.database.session() as session:
            purposes = (
                (
                    await session.execute(
                        select(LLMCall.purpose).where(LLMCall.message_id == body["user_message_id"])
                    )
                )
                .scalars()
                .all()
            )
        assert sorted(purposes) == ["chain.M1", "chain.M2", "chain.OL1", "chain.OL1"]


async def test_a_simple_message_keeps_todays_path(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        _, headers, room_id = await known_user(h)
        response = await h.client.post(
            "/v1/chat", json={"message": "Salut !", "room_id": room_id}, headers=headers
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert (body["mode"], body["rule"], body["turns"]) == ("simple", "short", 1)
        assert body["chain"] == [] and body["tools_used"] == []
        assert body["reply"] == "Réponse simple."


async def test_the_default_room_is_the_callers_direct_room(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        _, headers = await h.user("solo")
        first = await h.client.post("/v1/chat", json={"message": "Salut"}, headers=headers)
        second = await h.client.post("/v1/chat", json={"message": "Re"}, headers=headers)
        assert first.status_code == second.status_code == 200, first.text
        assert first.json()["room_id"] == second.json()["room_id"]
        room = await h.client.get(f"/v1/rooms/{first.json()['room_id']}", headers=headers)
        assert room.json()["kind"] == "direct"


async def test_errors_are_problems(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        _, headers = await h.user("bad")
        cases = [
            ({"message": "x", "room_id": "nope"}, 404),
            ({"message": "   "}, 422),
            ({"message": "x", "extra": 1}, 422),
            ({}, 422),
            ({"message": "x" * 9000}, 413),
        ]
        for payload, status in cases:
            response = await h.client.post("/v1/chat", json=payload, headers=headers)
            assert response.status_code == status, (payload, response.text)
            assert response.headers["content-type"].startswith(PROBLEM)
        unauthenticated = await h.client.post("/v1/chat", json={"message": "x"})
        assert unauthenticated.status_code == 401


def offline_chain_model() -> FunctionModel:
    """The chain stages' model, down (the engine has its own, up)."""

    def refuse(request: ProviderRequest) -> Any:
        raise ProviderUnavailable("remote", "connection refused")

    return FunctionModel(refuse, name="remote", model="remote")


STAGES = ("You are OL1", "You are M1", "You are M2")
SIMPLE_REPLY = "Réponse du chemin simple."


def simple_path_model(stage: Callable[[ProviderRequest], str]) -> FunctionModel:
    """The chain's stages answer with `stage`; the engine (the simple path) as usual."""
    engine = engine_model(writer=SIMPLE_REPLY)

    def answer(request: ProviderRequest) -> Any:
        if request.messages[0].content.startswith(STAGES):
            return stage(request)
        return engine._function(request)

    return FunctionModel(answer, name="scripted", model="scripted")


async def fallen_back(h: Harness, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """POST /v1/chat's body and the stored answer's metadata."""
    _, headers, room_id = await known_user(h)
    response = await h.client.post(
        "/v1/chat", json={"message": message, "room_id": room_id}, headers=headers
    )
    assert response.status_code == 200, response.text
    stored = await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)
    return response.json(), stored.json()["items"][-1]["metadata"]


async def test_a_chain_without_reply_falls_back_to_the_simple_path(
    make_harness: HarnessFactory,
) -> None:
    engine = engine_model(writer=SIMPLE_REPLY)
    offline = offline_chain_model()
    async with make_harness(
        providers=[engine, offline],
        chain_enabled=True,
        chain_stage_providers={"OL1": "remote", "M1": "remote", "M2": "remote"},
    ) as h:
        body, meta = await fallen_back(h, "Compare Python et Go")
        # The stages share the chat's breakers: OL1 found the model down, M1 and M2 never
        # waited on it, and /health says so.
        assert len(offline.requests) == 1
        assert [b.state for b in h.services.runtime.breakers()] == ["closed", "open"]
    assert body["reply"] == SIMPLE_REPLY
    # The chain was tried: it says so, with why it gave way, instead of passing for simple.
    assert (body["mode"], body["turns"], body["chain"]) == ("reflexive", 0, [])
    assert body["fallback"] == "no_reply"
    assert [s["node"] for s in body["skipped"]] == ["OL1", "M1", "M2"]
    assert meta["complexity"]["chain_fallback"] is True
    assert meta["chain"]["fallback"] == "no_reply"
    assert meta["chain"]["skipped"] == body["skipped"]


async def test_a_chain_that_worked_then_fell_back_reports_what_it_did(
    make_harness: HarnessFactory,
) -> None:
    calls = itertools.count()

    def busy(request: ProviderRequest) -> str:
        """A new tool call every turn, never an answer."""
        return "[TOOL:search_memories:" + json.dumps({"query": f"q{next(calls)}"}) + "]"

    async with make_harness(providers=[simple_path_model(busy)], chain_enabled=True) as h:
        body, meta = await fallen_back(h, "Analyse ce dont un chat a besoin")
    assert body["reply"] == SIMPLE_REPLY
    assert (body["mode"], body["rule"], body["fallback"]) == (
        "reflexive",
        "keyword:analyse",
        "no_reply",
    )
    # 8 turns (the global cap), one tool call each: none of it hidden behind the fallback.
    assert body["turns"] == 8
    assert [(s["node"], s["turns"]) for s in body["chain"]] == [("OL1", 4), ("M1", 3), ("M2", 1)]
    assert [t["args"]["query"] for t in body["tools_used"]] == [f"q{n}" for n in range(8)]
    # One source: the answer is the stored report, field for field.
    chain = meta["chain"]
    assert meta["complexity"] == {
        "mode": "reflexive",
        "rule": "keyword:analyse",
        "chain_fallback": True,
    }
    assert (chain["turns"], chain["fallback"], chain["reply"]) == (8, "no_reply", None)
    for key in ("chain", "tools_used", "skipped"):
        assert body[key] == chain[key], key


async def test_a_broken_chain_says_so(
    make_harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the chain")

    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        writer = h.services.chat.writer
        assert isinstance(writer, ChainWriter)
        monkeypatch.setattr(writer.runner, "run", broken)
        body, meta = await fallen_back(h, "Analyse ce dont un chat a besoin")
    assert (body["reply"], body["mode"], body["fallback"]) == (
        "Réponse simple.",
        "reflexive",
        "chain_error",
    )
    assert (body["turns"], body["chain"], body["skipped"]) == (0, [], [])
    assert meta["chain"]["fallback"] == "chain_error"


async def test_the_chain_can_be_turned_off(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=False) as h:
        _, headers, room_id = await known_user(h)
        response = await h.client.post(
            "/v1/chat", json={"message": "Analyse mes ventes", "room_id": room_id}, headers=headers
        )
        assert (response.json()["mode"], response.json()["reply"]) == ("simple", "Réponse simple.")


async def test_the_callers_route_decides_by_category(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[chain_and_engine_model()], chain_enabled=True) as h:
        _, headers, room_id = await known_user(h)
        # Short enough to be simple on its own: the category makes it reflexive...
        reflexive = await h.client.post(
            "/v1/chat",
            json={"message": "Et ce bug ?", "room_id": room_id, "route": "code"},
            headers=headers,
        )
        # ...and a simple category keeps a keyword-laden message simple.
        simple = await h.client.post(
            "/v1/chat",
            json={"message": "Analyse et compare en détail.", "route": "smalltalk"},
            headers=headers,
        )
    assert reflexive.status_code == 200, reflexive.text
    assert (reflexive.json()["mode"], reflexive.json()["rule"]) == ("reflexive", "category:code")
    assert (simple.json()["mode"], simple.json()["rule"]) == ("simple", "route_simple")
