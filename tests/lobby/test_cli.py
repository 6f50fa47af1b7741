"""`eko reflect ROOM` and `eko lobby stats ROOM` on a lobby made through the API."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from tests.api.conftest import HarnessFactory

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
