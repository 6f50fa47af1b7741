"""The orchestrator's two contracts: compact for a small local model, the seed's for the rest."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from eko.chat.engine.orchestrator_contract import (
    CompactOrchestratorOutput,
    compact_output_model,
    output_model,
    to_proposal,
)
from eko.llm.providers import FunctionModel
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import (
    calls_for,
    engine_model,
    known_user,
    orchestrator_json,
    orchestrator_requests,
    send,
)


def small_model(route: str, writer: str = "Voici.") -> FunctionModel:
    """A model that prefers compact output, as the local one does. It routes by rules unless
    EKO_ORCHESTRATOR_ROUTER=model, which these tests of its contract ask for."""
    model = engine_model(route, writer=writer)
    model.prefers_compact_output = True
    return model


def properties(model: FunctionModel) -> set[str]:
    schema = orchestrator_requests(model)[-1].json_schema
    assert schema is not None
    return set(schema["properties"])


async def test_a_small_local_model_routes_with_the_compact_contract(
    make_harness: HarnessFactory,
) -> None:
    model = small_model(json.dumps({"intent": "decision_support", "context_level": "medium"}))
    async with make_harness(providers=[model], orchestrator_router="model") as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Train ou avion pour aller à Marseille ?")
        calls = await calls_for(h, room_id, headers, body["user_message"]["id"])
    meta = body["assistant_message"]["metadata"]
    assert meta["intent"] == "decision_support"
    assert meta["orchestrator"]["fallback"] is None
    assert meta["orchestrator"]["call"]["contract"] == "compact"
    # No confidence, decision, notes or payload to generate; no web or scopes configured.
    assert properties(model) == {"intent", "context_level"}
    request = orchestrator_requests(model)[-1]
    system, user = request.messages[0].content, request.messages[1].content
    assert "Nodes the backend may run" not in system and "confidence" not in system
    # The message is sent once, in the user part; the state stays short.
    assert user.count("Train ou avion") == 1 and "Train ou avion" not in system
    assert '"quota_state"' not in system and '"smalltalk_intro_eligible": false' in system
    assert [(c["purpose"], c["outcome"]) for c in calls] == [
        ("orchestrator", "ok"),
        ("writer", "ok"),
    ]


async def test_compact_contract_asks_for_a_web_query_only_when_web_search_exists(
    make_harness: HarnessFactory,
) -> None:
    model = small_model(
        json.dumps(
            {"intent": "general_question", "context_level": "light", "web_search": "météo Lyon"}
        )
    )
    async with make_harness(
        providers=[model],
        orchestrator_router="model",
        web_search_provider="searxng",
        web_search_url="http://searx.test",
    ) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Quel temps demain à Lyon ?")
    assert properties(model) == {"intent", "context_level", "web_search"}
    orchestrator = body["assistant_message"]["metadata"]["orchestrator"]
    assert orchestrator["need_web"] is True
    assert orchestrator["web_search_prompt"] == "météo Lyon"


async def test_a_garbled_compact_answer_falls_back_and_says_so(
    make_harness: HarnessFactory,
) -> None:
    model = small_model('{"intent": "general_question"')
    async with make_harness(providers=[model], orchestrator_router="model") as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Quelle heure est-il à Tokyo ?")
    meta = body["assistant_message"]["metadata"]
    assert body["assistant_message"]["content"] == "Voici."
    assert meta["orchestrator"]["fallback"] == "invalid_output"


async def test_the_setting_overrides_the_models_preference(make_harness: HarnessFactory) -> None:
    full = small_model(orchestrator_json("decision_support", confidence=0.9))
    async with make_harness(
        providers=[full], orchestrator_contract="full", orchestrator_router="model"
    ) as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Train ou avion ?")
    assert {"confidence", "payload"} <= properties(full)
    assert body["assistant_message"]["metadata"]["orchestrator"]["call"]["contract"] == "full"

    remote = engine_model(json.dumps({"intent": "small_talk", "context_level": "light"}))
    async with make_harness(providers=[remote], orchestrator_contract="compact") as h:
        _, headers, room_id = await known_user(h)
        body = await send(h, room_id, headers, "Salut, ça roule ?")
    assert properties(remote) == {"intent", "context_level"}
    assert body["assistant_message"]["metadata"]["intent"] == "small_talk"


def test_compact_proposal_maps_flags_and_scopes() -> None:
    model = compact_output_model(("billing", "travel"), web=True)
    data = model.model_validate_json(
        '{"intent": "functional_question", "context_level": "light", "web_search": "  ",'
        ' "scopes": ["billing"]}'
    )
    proposal = to_proposal(data)
    assert proposal is not None
    assert proposal.need_web is False and proposal.web_search_prompt == ""
    assert proposal.scope_need is True and proposal.scopes_selected == ("billing",)
    assert proposal.confidence == 1.0 and proposal.decision == "compact"
    with pytest.raises(ValidationError):
        model.model_validate_json(
            '{"intent": "functional_question", "context_level": "light", "web_search": "",'
            ' "scopes": ["invented"]}'
        )
    with pytest.raises(ValidationError):  # no extra field, no unknown intent
        CompactOrchestratorOutput.model_validate_json(
            '{"intent": "chat", "context_level": "light"}'
        )


def test_the_compact_schema_is_a_fraction_of_the_full_one() -> None:
    compact = json.dumps(compact_output_model((), web=False).model_json_schema())
    full = json.dumps(output_model(()).model_json_schema())
    assert len(compact) < len(full) / 2
