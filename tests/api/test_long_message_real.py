"""A 6,000-character message with the bundled model: cut to the prompt budget, answered, and
the cut reported in the reply's metadata; the stored message keeps every character."""

from __future__ import annotations

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import build_services

pytestmark = pytest.mark.slow

FILLER = "Voici mes notes de réunion, le planning, les retours clients et le budget. "


# One real-model run is the cost; the scripted twins cover both backends.
@pytest.mark.parametrize("backend", ["sqlite"])
async def test_a_long_message_is_cut_to_the_budget_and_says_so(database: Database) -> None:
    budget = 900
    settings = Settings(
        database_url=database.url,
        llm_max_tokens=16,
        local_max_prompt_tokens=budget,
        # What is under test is the cut, not the speed: on a machine busy with other tests the
        # model is given the time it needs (the defaults gave the canned answer there).
        llm_providers=[{"kind": "local", "timeout_s": 600}],
        orchestrator_timeout_s=300,
        chat_writer_timeout_s=600,
        chat_message_deadline_s=900,
        _env_file=None,
    )
    services = build_services(settings, database=database)
    app = create_app(settings, services=services, migrate=False)
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name="Camille", is_pro=True)
    headers = {"Authorization": f"Bearer {key}"}
    text = (FILLER * 90)[:5_950] + " Quelle est la capitale de l'Italie ?"
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://eko.test", timeout=600
        ) as client:
            room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
            response = await client.post(
                f"/v1/rooms/{room['id']}/messages", json={"content": text}, headers=headers
            )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["user_message"]["content"] == text  # stored whole, cut only for the model
        meta = body["assistant_message"]["metadata"]
        assert meta.get("provider") == "local", meta
        cut = meta["input_cut"]
        assert cut["kept_tokens"] <= budget < cut["original_tokens"]
        assert cut["cut_chars"] > 0
        assert body["assistant_message"]["content"].strip()
    finally:
        await services.aclose()
