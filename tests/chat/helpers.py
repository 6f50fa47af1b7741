"""Scripted models and hand-built contexts for chat engine tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from eko.chat.engine.capabilities import compute_capabilities, load_catalog
from eko.chat.engine.context_loader import ChatContext, DocScopeInfo, FactItem, HistoryItem
from eko.chat.engine.profile import REQUIRED_KEYS, DiscoveryGates
from eko.chat.engine.quota import QuotaStatus, quota_state
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest

ALL_FACTS = {
    "first_name": "Marie",
    "use_tu_form": True,
    "main_city": "Lyon",
    "main_activity": "architecte",
}


def orchestrator_json(
    intent: str = "general_question",
    *,
    confidence: float = 0.9,
    context_level: str = "light",
    need_web: bool = False,
    web_search_prompt: str = "",
    scope_need: bool = False,
    scopes: Iterable[str] = (),
    decision: str = "route",
    notes: str = "test",
) -> str:
    return json.dumps(
        {
            "confidence": confidence,
            "decision": decision,
            "notes": notes,
            "payload": {
                "intent": intent,
                "context_level": context_level,
                "need_web": need_web,
                "web_search_prompt": web_search_prompt,
                "scope_need": scope_need,
                "scopes_selected": list(scopes),
            },
        }
    )


Answer = str | Callable[[ProviderRequest], str]


def engine_model(
    orchestrator: Answer | None = None, writer: Answer = "Voici ma réponse.", **kwargs: Any
) -> FunctionModel:
    """A FunctionModel answering the orchestrator (JSON-schema requests) and the writer apart."""
    route = orchestrator if orchestrator is not None else orchestrator_json()

    def answer(request: ProviderRequest) -> str:
        chosen = route if request.json_schema is not None else writer
        return chosen(request) if callable(chosen) else chosen

    return FunctionModel(answer, **kwargs)


def writer_requests(model: FunctionModel) -> list[ProviderRequest]:
    return [r for r in model.requests if r.json_schema is None]


def orchestrator_requests(model: FunctionModel) -> list[ProviderRequest]:
    return [r for r in model.requests if r.json_schema is not None]


def writer_system(model: FunctionModel, index: int = -1) -> str:
    return writer_requests(model)[index].messages[0].content


def make_ctx(
    *,
    facts: Mapping[str, Any] | None = None,
    used: int = 1,
    limit: int = 8,
    is_pro: bool = False,
    agents: Iterable[str] = (),
    services: Iterable[str] = (),
    discovery: DiscoveryGates | None = None,
    last_intent: str | None = None,
    last_mode: str | None = None,
    scopes: Iterable[str] = (),
) -> ChatContext:
    facts = dict(facts or {})
    items = [
        FactItem(key, "profile", "global", "string", value, 1.0, False, None, None, "")
        for key, value in sorted(facts.items())
    ]
    last = None
    if last_intent is not None or last_mode is not None:
        last = HistoryItem(
            message_id="prev",
            seq=1,
            role="assistant",
            content="…",
            sent_at="",
            sender_id=None,
            meta={"intent": last_intent, "mode": last_mode},
        )
    return ChatContext(
        user_id=1,
        user_profile={"public_user_id": "u1", "first_name": facts.get("first_name")},
        settings={},
        user_status=QuotaStatus(
            public_user_id="u1",
            is_pro=is_pro,
            free_quota_used=used,
            free_quota_limit=limit,
            state=quota_state(used, limit, is_pro=is_pro),
            paywall_should_show=not is_pro and used >= limit,
        ),
        history=[last] if last else [],
        facts=items,
        required_keys=REQUIRED_KEYS,
        discovery=discovery or DiscoveryGates(),
        capabilities=compute_capabilities(
            load_catalog(), active_agents=agents, connected_services=services
        ),
        docs_scopes=[DocScopeInfo(name, "") for name in scopes],
        last_assistant=last,
    )


async def known_user(
    h: Any, name: str = "marie", *, facts: Mapping[str, Any] = ALL_FACTS, persona: str | None = None
) -> tuple[str, dict[str, str], str]:
    """A user whose required facts are known (the intro is over), with a direct room."""
    public_id, headers = await h.user(name)
    for key, value in facts.items():
        response = await h.client.put(
            f"/v1/users/{public_id}/facts/{key}", json={"value": value}, headers=headers
        )
        assert response.status_code == 200, response.text
    room_id = await h.direct_room(headers, **({"persona": persona} if persona else {}))
    return public_id, headers, room_id


async def send(h: Any, room_id: str, headers: dict[str, str], text: str) -> dict[str, Any]:
    response = await h.client.post(
        f"/v1/rooms/{room_id}/messages", json={"content": text}, headers=headers
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def calls_for(h: Any, room_id: str, headers: dict[str, str], message_id: str) -> list[Any]:
    response = await h.client.get(
        f"/v1/rooms/{room_id}/llm-calls", params={"message_id": message_id}, headers=headers
    )
    result: list[Any] = response.json()
    return result
