"""Learning on the default stack with the bundled model and embedder (no setting changed):
a fact told in one message is extracted after the reply, stored, and used in a later answer."""

from __future__ import annotations

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services

pytestmark = pytest.mark.slow


# The real model is what this test is about; the scripted twin (test_learning_live.py) runs
# on both backends.
@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_bundled_model_learns_a_fact_and_uses_it_later(database: Database) -> None:
    settings = Settings(database_url=database.url, _env_file=None)
    assert settings.memory_extraction_on  # the default stack learns
    services = build_services(settings, database=database)
    app = create_app(settings, services=services, migrate=False)
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name="Camille")
    headers = {"Authorization": f"Bearer {key}"}
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://eko.test", headers=headers, timeout=300
        ) as client:
            room = (await client.post("/v1/rooms", json={"kind": "direct"})).json()["id"]
            told = await client.post(
                f"/v1/rooms/{room}/messages",
                json={"content": "My sister Léa plays the cello in a youth orchestra."},
            )
            assert told.status_code == 201, told.text
            await services.jobs.drain()  # the extraction job, after the reply
            items = (await client.get("/v1/memory/items")).json()
            # A new room: only memory can carry the fact there.
            other = (await client.post("/v1/rooms", json={"kind": "direct"})).json()["id"]
            asked = await client.post(
                f"/v1/rooms/{other}/messages",
                json={"content": "What instrument does my sister play?"},
            )
            assert asked.status_code == 201, asked.text
            calls = (await client.get(f"/v1/rooms/{room}/llm-calls")).json()
    finally:
        await services.jobs.aclose()
        for provider in services.providers:
            await provider.aclose()
    assert ("memory_extract", "ok") in [(c["purpose"], c["outcome"]) for c in calls]
    assert any("cello" in item["content"].lower() for item in items), items
    answer = asked.json()["assistant_message"]
    assert "cello" in answer["content"].lower(), answer
    assert answer["metadata"]["personal_context"] is True
