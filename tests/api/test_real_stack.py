"""The foundation through the real stack: bundled local model + bundled embedder, both backends."""

from __future__ import annotations

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services

pytestmark = pytest.mark.slow


# The real model is what this test is about; both backends are covered by its scripted twins,
# and one real-model run per backend would double the slowest part of CI.
@pytest.mark.parametrize("backend", ["sqlite"])
async def test_reply_from_bundled_model_through_api(database: Database) -> None:
    settings = Settings(database_url=database.url, llm_max_tokens=24, _env_file=None)
    services = build_services(settings, database=database)
    app = create_app(settings, services=services, migrate=False)
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name="Camille")
    headers = {"Authorization": f"Bearer {key}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://eko.test") as client:
        health = (await client.get("/health")).json()
        assert health["model"]["providers"][0]["name"] == "local"
        assert health["model"]["embedder"]["dim"] == 384
        room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
        response = await client.post(
            f"/v1/rooms/{room['id']}/messages",
            json={"content": "Bonjour ! Comment vas-tu ?"},
            headers=headers,
            timeout=300,
        )
        assert response.status_code == 201, response.text
        reply = response.json()["assistant_message"]
        calls = (await client.get(f"/v1/rooms/{room['id']}/llm-calls", headers=headers)).json()
        # The lean path's answer, as `eko bench reply` scores it: a question the bare model
        # gets right is right through the pipeline too.
        asked = await client.post(
            f"/v1/rooms/{room['id']}/messages",
            json={"content": "What is the capital of Italy?"},
            headers=headers,
            timeout=300,
        )
        assert asked.status_code == 201, asked.text
        answer = asked.json()["assistant_message"]
    for provider in services.providers:
        await provider.aclose()
    # The pipeline stored the reply with its provenance.
    assert reply["content"].strip()
    assert reply["metadata"].get("provider") == "local", reply["metadata"]
    assert reply["metadata"]["usage"]["output_tokens"] > 0
    # The lean path: routed by rules, so the writer's is the only model call of the message.
    # (Memory extraction, on by default, may have run after the reply: background work.)
    assert [
        (c["purpose"], c["provider"], c["outcome"])
        for c in calls
        if c["purpose"] != "memory_extract"
    ] == [("writer", "local", "ok")]
    assert reply["metadata"]["orchestrator"]["call"] == {"router": "rules"}
    assert "Rome" in answer["content"], answer["content"]
