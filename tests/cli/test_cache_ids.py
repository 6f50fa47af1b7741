"""`eko cache list` prints ids that `eko cache show|obsolete|delete` take, whole or as a prefix.

Entries are written directly (no embedder needed): these commands read and change rows only.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import select
from typer.testing import CliRunner

from eko.cli import app
from eko.store.db import Database
from eko.store.guard_models import GuardEntry

runner = CliRunner()
IDS = ("beef" + "0" * 28, "beef" + "1" * 28)


async def _invoke(*args: str) -> Any:
    # In a thread: the CLI runs its own event loop, and these tests are on pytest's.
    return await asyncio.to_thread(runner.invoke, app, list(args))


async def _entries(database: Database) -> None:
    async with database.session() as session:
        for number, entry_id in enumerate(IDS):
            session.add(
                GuardEntry(
                    id=entry_id,
                    scope="persona:eko",
                    key_hash=f"{number:064d}",
                    question=f"Question {number} ?",
                    answer=f"Réponse {number}.",
                    meta={},
                )
            )


async def _status(database: Database, entry_id: str) -> str | None:
    async with database.session() as session:
        result = await session.execute(select(GuardEntry.status).where(GuardEntry.id == entry_id))
        return result.scalar_one_or_none()


async def test_listed_ids_are_whole_and_accepted_by_show(cli_env: str, database: Database) -> None:
    await _entries(database)
    listed = await _invoke("cache", "list")
    assert listed.exit_code == 0, listed.output
    for entry_id in IDS:
        assert entry_id in listed.output
        shown = await _invoke("cache", "show", entry_id)
        assert shown.exit_code == 0, shown.output
        assert f"id: {entry_id}" in shown.output


async def test_show_obsolete_and_delete_take_a_unique_prefix(
    cli_env: str, database: Database
) -> None:
    await _entries(database)
    shown = await _invoke("cache", "show", "beef1")
    assert shown.exit_code == 0, shown.output
    assert f"id: {IDS[1]}" in shown.output and "Réponse 1." in shown.output

    obsolete = await _invoke("cache", "obsolete", "beef0")
    assert obsolete.exit_code == 0, obsolete.output
    assert await _status(database, IDS[0]) == "obsolete"
    assert await _status(database, IDS[1]) == "active"

    deleted = await _invoke("cache", "delete", "beef1", "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert f"entry {IDS[1]} deleted" in deleted.output
    assert await _status(database, IDS[1]) is None
    assert await _status(database, IDS[0]) == "obsolete"


async def test_ambiguous_or_unknown_ids_fail_and_change_nothing(
    cli_env: str, database: Database
) -> None:
    await _entries(database)
    ambiguous = await _invoke("cache", "delete", "beef", "--yes")
    assert ambiguous.exit_code != 0
    assert "more than one cache entry" in ambiguous.output
    assert IDS[0] in ambiguous.output and IDS[1] in ambiguous.output
    unknown = await _invoke("cache", "show", "0000")
    assert unknown.exit_code != 0 and "no cache entry '0000'" in unknown.output
    assert (await _invoke("cache", "obsolete", "dead")).exit_code != 0
    assert [await _status(database, i) for i in IDS] == ["active", "active"]
