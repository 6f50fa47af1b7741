"""A reflection on the bundled local model, through the API: the directive prompt is answered
in JSON under the schema, the decision is stored with its tone and tokens, and a "message"
decision is posted in the lobby as a proactive message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.guard.language import detect_language
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import Services, build_services

pytestmark = pytest.mark.slow

TONES = {"playful", "helpful", "technical", None}


@dataclass
class BundledLobby:
    """The default stack (bundled model) behind the API, a member, and a lobby whose talk is
    about a curiosity, "Kraken FM", posted through the API."""

    services: Services
    client: httpx.AsyncClient
    headers: dict[str, str]
    room_id: str

    async def get(self, what: str) -> Any:
        response = await self.client.get(f"/v1/rooms/{self.room_id}/{what}", headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()


@asynccontextmanager
async def bundled_lobby(
    database: Database, *, goal: str, talk: tuple[str, ...]
) -> AsyncIterator[BundledLobby]:
    settings = Settings(
        database_url=database.url,
        memory_extract_enabled=False,
        lobby_proactive_enabled=False,  # only what the test runs calls the model
        _env_file=None,
    )
    services = build_services(settings, database=database)
    app = create_app(settings, services=services, migrate=False)
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name="Lina", is_pro=True)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://eko.test", timeout=900
        ) as client:
            lobby = (await client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)).json()
            await services.memory.items.remember(
                NewItem(kind="goal", subject="Kraken FM", content=goal),
                scope=room_key(lobby["id"]),
            )
            for text in talk:
                posted = await client.post(
                    f"/v1/rooms/{lobby['id']}/messages", json={"content": text}, headers=headers
                )
                assert posted.status_code == 201, posted.text
            yield BundledLobby(services, client, headers, lobby["id"])
    finally:
        await services.aclose()


# One real-model run is the cost; the scripted twins cover both backends.
@pytest.mark.parametrize("backend", ["sqlite"])
async def test_a_reflection_on_the_bundled_model_decides_and_is_recorded(
    database: Database,
) -> None:
    async with bundled_lobby(
        database,
        goal="Qu'est-ce que Kraken FM, dont l'équipe parle souvent ?",
        talk=(
            "On relance Kraken FM ce soir ?",
            "Oui, la playlist de Kraken FM était top hier",
            "Je m'occupe du flux audio",
        ),
    ) as lobby:
        response = await lobby.client.post(
            f"/v1/rooms/{lobby.room_id}/reflection/trigger", headers=lobby.headers
        )
        assert response.status_code == 200, response.text
        body = response.json()
        calls = await lobby.get("llm-calls")
        messages = (await lobby.get("messages"))["items"]

    reflection = body["reflection"]
    assert reflection.get("skipped") is None, reflection
    # The model answered under the schema: a decision was parsed, not a failed call.
    assert reflection["action"] in {"message", "pass"}, reflection
    assert not str(reflection.get("reason") or "").startswith("model call failed"), reflection
    assert reflection["tone"] in TONES
    reflection_calls = [c for c in calls if c["purpose"] == "reflection"]
    assert len(reflection_calls) == 1, [c["purpose"] for c in calls]
    assert reflection_calls[0]["provider"] == "local"
    assert reflection_calls[0]["outcome"] == "ok", reflection_calls[0]
    if reflection["action"] == "message":
        assert messages[-1]["role"] == "assistant"
        assert messages[-1]["metadata"]["proactive"] is True
        assert messages[-1]["content"].strip()
    else:
        assert messages[-1]["role"] == "user"  # a pass posts nothing


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_bundled_model_writes_what_the_rules_decided_through_the_api(
    database: Database,
) -> None:
    """The default stack (bundled model → EKO_LOBBY_DECIDER=auto decides by rules): people
    talk about a curiosity's subject through the API, one activity window runs, and the
    bundled model's one call writes the question, posted in the lobby in French."""
    async with bundled_lobby(
        database,
        goal="C'est quoi exactement Kraken FM ?",
        talk=("je bosse sur Kraken FM cet aprem", "tu me montres la nouvelle version ?"),
    ) as lobby:
        assert lobby.services.lobby.opportunity.by_rules
        await lobby.services.lobby.activity(lobby.room_id)
        calls = await lobby.get("llm-calls")
        messages = (await lobby.get("messages"))["items"]

    purposes = [c["purpose"] for c in calls]
    assert "reflection_opportunity" not in purposes  # no model call decided
    writes = [c for c in calls if c["purpose"] == "reflection_opportunity_write"]
    assert len(writes) == 1 and writes[0]["outcome"] == "ok", writes
    said = messages[-1]
    assert said["role"] == "assistant" and said["metadata"]["proactive"] is True, said
    assert said["content"].strip() and not said["content"].lower().startswith("eko")
    assert detect_language(said["content"]) != "en", said["content"]
