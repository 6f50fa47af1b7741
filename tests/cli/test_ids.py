"""Id resolution shared by the commands: a full id, or a unique prefix of one."""

from __future__ import annotations

import pytest

from eko.cli.ids import MIN_PREFIX, AmbiguousId, UnknownId, resolve_id
from eko.store.db import Database
from eko.store.models import Room

IDS = ("abcd" + "0" * 28, "abcd" + "1" * 28, "ef01" + "2" * 28)


@pytest.fixture
async def rooms(database: Database) -> Database:
    async with database.session() as session:
        for room_id in IDS:
            session.add(Room(id=room_id, kind="lobby", name=room_id[:4], persona="eko"))
    return database


async def _resolve(database: Database, given: str) -> str:
    async with database.session() as session:
        return await resolve_id(session, Room.id, given)


async def test_a_full_id_or_a_unique_prefix_names_one_row(rooms: Database) -> None:
    assert await _resolve(rooms, IDS[1]) == IDS[1]
    assert await _resolve(rooms, "ef01") == IDS[2]
    assert await _resolve(rooms, "abcd1") == IDS[1]
    assert await _resolve(rooms, f"  {IDS[0][:10]} ") == IDS[0]  # pasted with spaces


async def test_an_ambiguous_prefix_lists_its_candidates(rooms: Database) -> None:
    with pytest.raises(AmbiguousId) as raised:
        await _resolve(rooms, "abcd")
    assert raised.value.candidates == [IDS[0], IDS[1]]


@pytest.mark.parametrize(
    "given",
    ["", "ffff", "abc", "abcd0" + "9" * 27, "%%%%", "____", "abcd%"],
    ids=["empty", "unknown", "too-short", "one-char-off", "like-percent", "like-any", "mixed"],
)
async def test_unknown_short_or_wildcard_prefixes_match_nothing(
    rooms: Database, given: str
) -> None:
    assert len("abc") < MIN_PREFIX
    with pytest.raises(UnknownId):
        await _resolve(rooms, given)
