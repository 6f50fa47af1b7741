"""`eko rooms list|show` over rooms and messages made through the API."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from typer.testing import CliRunner

from eko.cli import app
from eko.store.db import Database
from eko.store.models import Room

runner = CliRunner()


async def _invoke(*args: str) -> Any:
    # In a thread: the CLI runs its own event loop, and these tests are on pytest's.
    return await asyncio.to_thread(runner.invoke, app, list(args))


async def _rooms_with_messages(harness: Any) -> tuple[str, str, str]:
    """Alice made a lobby Bob joined, then a direct room where she sent 2 messages (4 stored
    with the answers); Bob has nothing else."""
    _, alice = await harness.user("Alice")
    bob_public_id, _ = await harness.user("Bob")
    created = await harness.client.post(
        "/v1/rooms", json={"kind": "lobby", "name": "Family"}, headers=alice
    )
    assert created.status_code == 201, created.text
    lobby = created.json()["id"]
    joined = await harness.client.post(
        f"/v1/rooms/{lobby}/members", json={"public_id": bob_public_id}, headers=alice
    )
    assert joined.status_code in (200, 201, 204), joined.text
    direct = await harness.direct_room(alice, name="Alice's notes")
    for text in ("Bonjour Eko", "Parle-moi du jardin"):
        sent = await harness.client.post(
            f"/v1/rooms/{direct}/messages", json={"content": text}, headers=alice
        )
        assert sent.status_code in (200, 201), sent.text
    return direct, lobby, bob_public_id


def _row(output: str, room_id: str) -> str:
    return next(line for line in output.splitlines() if room_id in line)


async def test_list_shows_every_room_with_counts_and_filters_by_user(
    cli_env: str, make_harness: Callable[..., Any]
) -> None:
    async with make_harness() as harness:
        direct, lobby, bob = await _rooms_with_messages(harness)

    listed = await _invoke("rooms", "list")
    assert listed.exit_code == 0, listed.output
    assert "2 rooms" in listed.output
    direct_row = _row(listed.output, direct)
    assert re.search(r"direct\s*│\s*Alice's notes\s*│\s*eko\s*│\s*1\s*│\s*4\s*│", direct_row)
    lobby_row = _row(listed.output, lobby)
    assert re.search(r"lobby\s*│\s*Family\s*│\s*eko\s*│\s*2\s*│\s*0\s*│", lobby_row)
    # Most recently active first: the direct room's messages are newer than the lobby.
    assert listed.output.index(direct) < listed.output.index(lobby)

    bobs = await _invoke("rooms", "list", "--user", "Bob")
    assert bobs.exit_code == 0, bobs.output
    assert lobby in bobs.output and direct not in bobs.output
    by_id = await _invoke("rooms", "list", "--user", bob)
    assert by_id.exit_code == 0 and lobby in by_id.output and direct not in by_id.output

    nobody = await _invoke("rooms", "list", "--user", "Nobody")
    assert nobody.exit_code != 0 and "no user 'Nobody'" in nobody.output


async def test_show_takes_a_full_id_or_a_unique_prefix(
    cli_env: str, make_harness: Callable[..., Any]
) -> None:
    async with make_harness() as harness:
        direct, lobby, bob = await _rooms_with_messages(harness)

    shown = await _invoke("rooms", "show", lobby)
    assert shown.exit_code == 0, shown.output
    for expected in (f"id: {lobby}", "kind: lobby", "name: Family", "persona: eko"):
        assert expected in shown.output
    assert "messages: 0" in shown.output and "members: 2" in shown.output
    assert "Alice" in shown.output and f"Bob ({bob}, member)" in shown.output

    by_prefix = await _invoke("rooms", "show", direct[:6])
    assert by_prefix.exit_code == 0, by_prefix.output
    assert f"id: {direct}" in by_prefix.output and "messages: 4" in by_prefix.output
    assert "last activity: 2" in by_prefix.output  # a date, not "-"


async def test_show_refuses_unknown_ambiguous_and_too_short_ids(
    cli_env: str, database: Database
) -> None:
    async with database.session() as session:
        for suffix in ("1", "2"):
            session.add(Room(id="abcdef" + suffix * 26, kind="lobby", name="x", persona="eko"))

    unknown = await _invoke("rooms", "show", "0123456789")
    assert unknown.exit_code != 0
    assert "no room '0123456789'" in unknown.output and "eko rooms list" in unknown.output

    ambiguous = await _invoke("rooms", "show", "abcdef")
    assert ambiguous.exit_code != 0
    assert "more than one room" in ambiguous.output
    assert "abcdef" + "1" * 26 in ambiguous.output and "abcdef" + "2" * 26 in ambiguous.output

    assert (await _invoke("rooms", "show", "abc")).exit_code != 0  # below the minimum prefix
    assert (await _invoke("rooms", "show", "abcdef2")).exit_code == 0
