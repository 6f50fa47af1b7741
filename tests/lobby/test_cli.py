"""`eko reflect ROOM`, `eko lobby activity ROOM` and `eko lobby stats ROOM` on a lobby made
through the API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.wiring import Services, build_services
from tests.api.conftest import HarnessFactory
from tests.lobby.kit import Writer

runner = CliRunner()
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def _invoke(*args: str) -> Any:
    return await asyncio.to_thread(runner.invoke, app, list(args))


async def test_reflect_and_stats_from_the_cli(
    backend: str, cli_env: str, make_harness: HarnessFactory
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("alice")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        direct = await h.direct_room(alice)
        # Named: the assistant answers, so its message is the last one.
        sent = await h.client.post(
            f"/v1/rooms/{lobby['id']}/messages", json={"content": "Eko, salut"}, headers=alice
        )
        assert sent.json()["assistant_message"] is not None
    reflected = await _invoke("reflect", lobby["id"][:8])
    assert reflected.exit_code == 0, reflected.output
    assert "skipped: last_message_is_assistant" in reflected.output
    assert "model calls: 0" in reflected.output
    stats = await _invoke("lobby", "stats", lobby["id"])
    assert stats.exit_code == 0, stats.output
    assert "total_reflections: 1" in stats.output and "manual" in stats.output
    not_lobby = await _invoke("reflect", direct)
    assert not_lobby.exit_code == 1 and "not a lobby" in not_lobby.output


async def test_an_activity_window_from_the_cli_speaks_about_a_curiosity_being_discussed(
    backend: str, cli_env: str, make_harness: HarnessFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`eko lobby activity ROOM`: people talked (through the API) about a curiosity's subject;
    the window summarizes, the rules decide, the model writes, and the message is stored."""
    writer = Writer()

    def scripted(settings: Settings, **_: Any) -> Services:
        return build_services(settings, providers=[FunctionModel(writer)], embedder=HashEmbedder())

    monkeypatch.setattr("eko.wiring.build_services", scripted)
    monkeypatch.setenv("EKO_LOBBY_DECIDER", "rules")
    async with make_harness() as h:
        _, alice = await h.user("alice")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        await h.services.memory.items.remember(
            NewItem(kind="goal", subject="Kraken FM", content="C'est quoi exactement Kraken FM ?"),
            scope=room_key(lobby["id"]),
        )
        for text in ("je bosse sur Kraken FM cet aprem", "tu me montres la nouvelle version ?"):
            sent = await h.client.post(
                f"/v1/rooms/{lobby['id']}/messages", json={"content": text}, headers=alice
            )
            assert sent.status_code == 201 and sent.json()["assistant_message"] is None

    done = await _invoke("lobby", "activity", lobby["id"][:8])
    assert done.exit_code == 0, done.output
    assert "decided by: rules" in done.output and "action: message" in done.output
    assert "message: Au fait, c'est quoi exactement Kraken FM ?" in done.output
    assert "model calls: 1" in done.output
    assert set(writer.prompts) == {"SummaryOutput", "OpportunityMessage"}
    # The window is spent: nobody spoke since, so the next one calls no model.
    again = await _invoke("lobby", "activity", lobby["id"])
    assert again.exit_code == 0 and "nothing new" in again.output, again.output
    async with make_harness() as h:
        listed = await h.services.lobby.reflector.last_message(lobby["id"])
    assert listed is not None and listed.role == "assistant" and listed.meta["proactive"] is True
    not_found = await _invoke("lobby", "activity", "nope")
    assert not_found.exit_code == 1
