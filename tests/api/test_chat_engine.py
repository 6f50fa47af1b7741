"""The chat engine through the API: metadata, one-model-call routing, fallbacks, flags, logs."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from eko.chat.engine.flags import contains_flag_text
from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec
from eko.llm.errors import ProviderHTTPError, ProviderTimeout, ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import (
    calls_for,
    engine_model,
    known_user,
    orchestrator_json,
    orchestrator_requests,
    send,
    writer_requests,
)

FALLBACK_TEXT_FILE = "system/fallback_answer.md"


async def test_orchestration_is_stored_in_the_reply_metadata(make_harness: HarnessFactory) -> None:
    model = engine_model(
        orchestrator_json("decision_support", confidence=0.93), writer="Prends le train."
    )
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Train ou avion pour aller à Marseille ?")
        reply = body["assistant_message"]
        meta = reply["metadata"]
        calls = await calls_for(h, room_id, headers, body["user_message"]["id"])
    assert reply["content"] == "Prends le train."
    assert meta["intent"] == "decision_support" and meta["mode"] == "normal"
    orchestrator = meta["orchestrator"]
    assert orchestrator["intent_eligible"] is True and orchestrator["intent_block_reason"] is None
    assert orchestrator["confidence"] == 0.93 and orchestrator["fallback"] is None
    assert {
        "smalltalk_intro_eligible",
        "smalltalk_target_key",
        "discovery_forced",
        "blocked_reason",
    } <= set(orchestrator["gates"])
    assert set(orchestrator["capabilities"]) == {
        "can_action_request",
        "can_deep_work",
        "can_professional_request",
    }
    assert orchestrator["signals"]["explicit_request"] is True
    plan = {node["id"]: node for node in meta["plan"]}
    assert {"A", "B", "D"} <= set(plan) and "C" not in plan and "S" not in plan
    assert plan["D"]["type"] == "agent.response_writer"
    assert set(plan["D"]["depends_on"]) == set(plan) - {"D"}
    for node_id in ("A", "B", "D"):
        assert meta["nodes"][node_id]["outcome"] == "ok"
        assert meta["nodes"][node_id]["duration_ms"] >= 0
    assert meta["personal_context"] is True and "facts" in meta["personal_context_sources"]
    assert meta["flags"] == {}
    assert meta["provider"] == "function"
    # One routing call and one writing call per message.
    assert [(c["purpose"], c["outcome"]) for c in calls] == [
        ("orchestrator", "ok"),
        ("writer", "ok"),
    ]


async def test_orchestrator_prompt_lists_nodes_state_and_history(
    make_harness: HarnessFactory,
) -> None:
    model = engine_model()
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "premier")
        await send(h, room_id, headers, "second")
    request = orchestrator_requests(model)[-1]
    system, user = request.messages[0].content, request.messages[1].content
    for node_type in (
        "tool.db_load_context",
        "tool.quota_check",
        "tool.web_search",
        "tool.docs_chunks",
        "agent.response_writer",
    ):
        assert node_type in system
    assert '"smalltalk_intro_eligible": false' in system
    assert '"previous_intent": "general_question"' in system
    assert "premier" in user and user.rstrip().endswith("second")
    assert request.json_schema is not None
    payload = request.json_schema["$defs"]["OrchestratorPayload"]["properties"]
    assert payload["web_search_prompt"]["maxLength"] == 100
    assert payload["scopes_selected"]["maxItems"] == 0  # no docs scope exists: none to pick
    assert "enum" in payload["intent"] and "enum" in payload["context_level"]


@pytest.mark.parametrize(
    ("orchestrator", "reason"),
    [
        ("this is not json", "invalid_output"),
        (orchestrator_json("deep_work", confidence=0.5, context_level="max"), "low_confidence"),
        (
            '{"confidence": 0.9, "decision": "x", "notes": "y", "payload": {"intent": "hack"}}',
            "invalid_output",
        ),
    ],
)
async def test_bad_orchestrator_output_falls_back_deterministically(
    make_harness: HarnessFactory, orchestrator: str, reason: str
) -> None:
    model = engine_model(orchestrator, writer="Réponse sûre.")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Explique-moi la photosynthèse"))[
            "assistant_message"
        ]
    meta = reply["metadata"]
    assert reply["content"] == "Réponse sûre."
    assert meta["orchestrator"]["fallback"] == reason
    assert (meta["intent"], meta["orchestrator"]["context_level"]) == ("general_question", "light")


async def test_orchestrator_down_or_too_slow_still_answers(make_harness: HarnessFactory) -> None:
    async def slow_router(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            await asyncio.sleep(5)
        return "Réponse malgré tout."

    async with make_harness(
        providers=[FunctionModel(slow_router)], orchestrator_timeout_s=0.05
    ) as h:
        _, headers, room_id = await known_user(h)
        slow = (await send(h, room_id, headers, "Bonjour ?"))["assistant_message"]
    assert slow["content"] == "Réponse malgré tout."
    assert slow["metadata"]["orchestrator"]["fallback"] == "timeout"

    # The orchestrator's call fails at the provider; the writer's call then works. (A timeout
    # would open the provider's circuit: see tests/llm/test_runtime_failfast.py.)
    down = FunctionModel.scripted(
        ProviderHTTPError("f", 502, "bad gateway"), "Le rédacteur répond."
    )
    async with make_harness(providers=[down]) as h:
        _, headers, room_id = await known_user(h, "zoe")
        reply = (await send(h, room_id, headers, "Bonjour ?"))["assistant_message"]
    assert reply["content"] == "Le rédacteur répond."
    assert reply["metadata"]["orchestrator"]["fallback"] == "llm_error"


@pytest.mark.parametrize(
    ("writer", "settings", "reason", "cause"),
    [
        (ProviderUnavailable("function", "down"), {}, "llm_error", "unreachable"),
        (ProviderTimeout("function", "no answer in time"), {}, "llm_error", "timeout"),
        ("   ", {}, "llm_error", "error"),  # an empty answer is unusable: the runtime gives up
        ("aha_moment=true", {}, "empty_answer", "error"),  # nothing left once the flag is out
        ("SLOW", {"chat_writer_timeout_s": 0.05}, "writer_timeout", "timeout"),
    ],
)
async def test_writer_failures_give_the_safe_answer(
    make_harness: HarnessFactory, writer: Any, settings: dict[str, Any], reason: str, cause: str
) -> None:
    async def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return orchestrator_json()
        if isinstance(writer, Exception):
            raise writer
        if writer == "SLOW":
            await asyncio.sleep(5)
        return str(writer)

    async with make_harness(providers=[FunctionModel(answer)], **settings) as h:
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Une question"))["assistant_message"]
    assert reply["type"] == "fallback"
    assert reply["content"] == h.services.prompts.text(FALLBACK_TEXT_FILE)
    assert reply["metadata"]["fallback"] == reason
    assert reply["metadata"]["fallback_cause"] == cause  # what the page tells the person
    assert reply["metadata"]["intent"] == "general_question"  # the routing is still recorded
    assert not contains_flag_text(reply["content"])


async def test_engine_crash_still_answers(make_harness: HarnessFactory, monkeypatch: Any) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, headers, room_id = await known_user(h)

        async def broken(*_args: Any, **_kwargs: Any) -> None:
            raise RuntimeError("database on fire")

        monkeypatch.setattr(h.services.engine.engine._loader, "load", broken)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "allô"}, headers=headers
        )
    assert response.status_code == 201
    reply = response.json()["assistant_message"]
    assert reply["type"] == "fallback" and reply["content"].strip()
    assert reply["metadata"]["fallback"] == "engine_error"
    assert "database on fire" in reply["metadata"]["error"]


async def test_long_answers_are_capped_with_an_ellipsis(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model(writer="bla " * 3000)]) as h:
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Raconte"))["assistant_message"]
    assert len(reply["content"]) <= 4000 and reply["content"].endswith("…")


FLAGGED = [
    "Tu viens de voir la valeur ! aha_moment=true",
    "Super.\n\naha_moment=true\n",
    "Début AHA_MOMENT : TRUE au milieu, puis la suite.",
    "On arrête là [onboarding_abort = true] si tu veux.",
    "Ok.  `aha_moment=true`  \n onboarding_abort=true",
    "Fin coupée onboarding_abort=tr",
]


async def test_flags_never_reach_stored_content(make_harness: HarnessFactory) -> None:
    texts = iter(FLAGGED)
    model = engine_model(writer=lambda _request: next(texts))
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        replies = [
            (await send(h, room_id, headers, f"q{i}"))["assistant_message"]
            for i in range(len(FLAGGED))
        ]
        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
    stored = [m["content"] for m in page["items"] if m["role"] == "assistant"]
    assert len(stored) == len(FLAGGED)
    for content in stored:
        assert content.strip() and not contains_flag_text(content), content
    assert replies[0]["metadata"]["flags"] == {"aha_moment": True}
    assert replies[0]["content"] == "Tu viens de voir la valeur !"
    assert replies[3]["metadata"]["flags"] == {"onboarding_abort": True}
    assert replies[4]["metadata"]["flags"] == {"aha_moment": True, "onboarding_abort": True}


async def test_a_failing_extra_node_leaves_the_answer(make_harness: HarnessFactory) -> None:
    async def flaky(_context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        raise ConnectionError("memory store unreachable")

    async with make_harness(providers=[engine_model(writer="Toujours une réponse.")]) as h:
        h.services.engine.nodes.register(NodeSpec("X", "tool.flaky", "always fails", flaky, 1))
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Salut"))["assistant_message"]
    assert reply["content"] == "Toujours une réponse."
    assert reply["metadata"]["nodes"]["X"]["outcome"] == "error"
    assert "unreachable" in reply["metadata"]["nodes"]["X"]["error"]
    assert reply["metadata"]["nodes"]["D"]["outcome"] == "ok"


async def test_persona_rules_and_turns_reach_the_writer(make_harness: HarnessFactory) -> None:
    model = engine_model(writer=lambda r: f"vu {len(r.messages)}")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h, persona="lisa")
        await send(h, room_id, headers, "un")
        await send(h, room_id, headers, "deux")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)).json()
        await send(h, lobby["id"], headers, "Eko, bonjour")
    direct = writer_requests(model)[1]
    system = direct.messages[0].content
    assert "<name>Lisa</name>" in system
    for snippet in (
        "executive assistant",
        "Chat-safe format",
        "no code fences",
        "Mode: normal",
        "About the user",
        "first_name: Marie",
    ):
        assert snippet in system, snippet
    assert [(m.role, m.content) for m in direct.messages[1:]] == [
        ("user", "un"),
        ("assistant", "vu 2"),
        ("user", "deux"),
    ]
    assert direct.messages[1].name is None  # a direct room sends no display name
    assert writer_requests(model)[2].messages[-1].name == "marie"  # the lobby does


async def test_logs_trace_the_pipeline(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, headers, room_id = await known_user(h)
        with capture_logs() as logs:
            await send(h, room_id, headers, "Salut")
    events = {entry["event"]: entry for entry in logs}
    summary = events["chat.ctx.summary"]
    assert summary["docs_scopes_count"] == 0 and summary["facts_store_count"] == 4
    for node_type in ("tool.db_load_context", "tool.quota_check", "agent.response_writer"):
        entry = events[f"chat.node.{node_type}"]
        assert entry["outcome"] == "ok" and entry["duration_ms"] >= 0
    call = events["chat.response_writer.call"]
    assert call["has_docs"] is False and call["has_web"] is False
    assert events["chat.orchestrator.decision"]["intent"] == "general_question"


async def test_first_message_without_private_context_is_not_personal(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(
        providers=[engine_model(orchestrator_json("functional_question"))]
    ) as h:
        _, headers = await h.user("newcomer")
        room_id = await h.direct_room(headers)
        first = (await send(h, room_id, headers, "Tu sais faire quoi ?"))["assistant_message"]
        second = (await send(h, room_id, headers, "Et encore ?"))["assistant_message"]
    assert first["metadata"]["personal_context"] is False
    assert first["metadata"]["personal_context_sources"] == []
    assert second["metadata"]["personal_context"] is True
    assert second["metadata"]["personal_context_sources"] == ["history"]


async def test_the_orchestrator_prompt_carries_the_current_message_once(
    make_harness: HarnessFactory,
) -> None:
    model = FunctionModel(
        lambda request: orchestrator_json() if request.json_schema is not None else "Bien sûr."
    )
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        await send(h, room_id, headers, "Premier message zèbre-un")
        await send(h, room_id, headers, "Second message girafe-deux")
    routed = [r for r in model.requests if r.json_schema is not None][-1]
    prompt = "\n".join(m.content for m in routed.messages)
    assert prompt.count("girafe-deux") == 1
    assert prompt.count("zèbre-un") == 1  # earlier turns stay in the conversation
