"""One conversation end to end on the bundled local model and embedder.

A model this small routes and writes poorly; what is checked is the pipeline: the
orchestrator's grammar-constrained JSON call (asked for here: with the local model the route
comes from rules by default), the plan, the writer's call, the answer-only lock and the stored
metadata, over two turns (the second sees the first).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from eko.api.app import create_app
from eko.chat.engine.decision import INTENTS
from eko.chat.engine.flags import contains_flag_text
from eko.config import Settings
from eko.store import users as user_repo
from eko.wiring import build_services

pytestmark = pytest.mark.slow


async def test_conversation_on_the_bundled_model(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}",
        # Generous timeouts: CI shares 2 cores, and grammar-constrained sampling over Gemma's
        # 262k-token vocabulary is slow; this test checks the path, not the speed.
        llm_providers=[{"kind": "local", "timeout_s": 600}],
        orchestrator_timeout_s=900,
        chat_writer_timeout_s=900,
        # The per-message deadline bounds all of them: 120 s by default, which two calls on a
        # loaded 2-core machine exceeded (77 s + 42 s), turning a slow pass into a fallback.
        chat_message_deadline_s=1800,
        llm_max_tokens=32,
        orchestrator_max_tokens=200,
        memory_extract_enabled=False,
        orchestrator_router="model",
        _env_file=None,
    )
    services = build_services(settings)
    app = create_app(settings, services=services, migrate=True)
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=transport, base_url="http://eko.test", timeout=600
            ) as client,
        ):
            async with services.database.session() as session:
                _, key = await user_repo.create_user(session, display_name="Camille")
                _, staff_key = await user_repo.create_user(session, display_name="s", role="staff")
            headers = {"Authorization": f"Bearer {key}"}
            ingest = await client.post(
                "/v1/docs/scopes/product/documents",
                headers={"Authorization": f"Bearer {staff_key}"},
                json={"source": "faq.md", "text": "# FAQ\n\nEko answers in your language."},
            )
            assert ingest.status_code == 201, ingest.text
            room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)).json()
            replies = []
            for text in (
                "Bonjour ! Je m'appelle Camille.",
                "Tu peux m'aider à organiser ma semaine ?",
            ):
                stored = await client.post(
                    f"/v1/rooms/{room['id']}/messages?respond=false",
                    json={"content": text},
                    headers=headers,
                )
                answer = await client.post(
                    "/v1/chat/message",
                    headers=headers,
                    json={
                        "conversation_id": room["id"],
                        "user_message_id": stored.json()["user_message"]["id"],
                    },
                )
                assert answer.status_code == 200, answer.text
                replies.append(answer.json()["assistant_message"])
            calls = (await client.get(f"/v1/rooms/{room['id']}/llm-calls", headers=headers)).json()
    finally:
        await services.aclose()

    for reply in replies:
        meta = reply["metadata"]
        assert reply["content"].strip() and len(reply["content"]) <= 4000
        assert not contains_flag_text(reply["content"])
        assert meta["intent"] in INTENTS and meta["mode"] in ("normal", "smalltalk_intro")
        assert meta["plan"][-1]["type"] == "agent.response_writer"
        assert meta["nodes"]["A"]["outcome"] == "ok" and meta["nodes"]["B"]["outcome"] == "ok"
        assert isinstance(meta["personal_context"], bool)
    # A new user: the intro gate is open, so the first turn is the intro whatever the model says.
    assert replies[0]["metadata"]["mode"] == "smalltalk_intro"
    assert replies[1]["metadata"]["orchestrator"]["signals"]["previous_mode"] == "smalltalk_intro"
    # Each turn: one grammar-constrained orchestrator call that parsed, one writer call.
    outcomes = [(c["purpose"], c["provider"], c["outcome"]) for c in calls]
    assert outcomes == [("orchestrator", "local", "ok"), ("writer", "local", "ok")] * 2
    for reply in replies:
        orchestrator = reply["metadata"]["orchestrator"]
        assert orchestrator["proposed"] is not None  # the model's JSON validated
        assert orchestrator["fallback"] in (None, "low_confidence")
