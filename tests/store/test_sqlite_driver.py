"""SQLite's driver (eko/store/sqlite_driver.py): one trip to the connection's thread per
statement, and everything SQLAlchemy reads of a cursor the same as with aiosqlite's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text, update
from sqlalchemy.exc import IntegrityError

from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.migrate import upgrade
from eko.store.models import Message, User
from eko.store.sqlite_driver import OneTripConnection


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}")
    await upgrade(database)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call made on a connection's thread, by name."""
    seen: list[str] = []
    original = OneTripConnection._execute

    async def counted(self: OneTripConnection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(fn, "__name__", repr(fn)))
        return await original(self, fn, *args, **kwargs)

    monkeypatch.setattr(OneTripConnection, "_execute", counted)
    return seen


async def test_a_statement_is_one_trip_and_a_transaction_one_more(
    sqlite_db: Database, trips: list[str]
) -> None:
    async with sqlite_db.session() as session:
        await user_repo.create_user(session, display_name="ana")
    trips.clear()
    async with sqlite_db.session() as session:
        names = list(await session.scalars(select(User.display_name)))
        assert await session.scalar(text("SELECT 41 + 1")) == 42
    assert names == ["ana"]
    # Two statements (each: cursor, execute, fetch and close at once), then the commit.
    assert trips == ["_execute", "_execute", "commit"]


async def test_results_rowcounts_returning_and_errors_are_as_sqlite_gives_them(
    sqlite_db: Database,
) -> None:
    async with sqlite_db.session() as session:
        user, _ = await user_repo.create_user(session, display_name="ana")
        room = await room_repo.create_room(
            session, kind="direct", name="r", persona="eko", created_by=user.id
        )
    rows = [
        {
            "id": f"m{seq}",
            "room_id": room.id,
            "seq": seq,
            "role": "user",
            "type": "message",
            "content": f"message {seq}",
            "meta": {},
            "char_count": 9,
            "char_end": 9 * seq,
            "dedupe_key": f"k{seq}",
        }
        for seq in range(1, 6)
    ]
    async with sqlite_db.session() as session:
        await session.execute(insert(Message), rows)  # executemany
        changed = await session.execute(
            update(Message).where(Message.seq > 3).values(content="edited")
        )
        assert changed.rowcount == 2  # type: ignore[attr-defined]
        returned = await session.execute(
            update(Message).where(Message.seq == 1).values(content="first").returning(Message.id)
        )
        assert returned.scalars().all() == ["m1"]
        nothing = await session.execute(select(Message.id).where(Message.seq > 99))
        assert nothing.all() == []
    async with sqlite_db.session() as session:
        contents = list(await session.scalars(select(Message.content).order_by(Message.seq)))
    assert contents == ["first", "message 2", "message 3", "edited", "edited"]
    with pytest.raises(IntegrityError):
        async with sqlite_db.session() as session:
            await session.execute(insert(Message), [{**rows[0], "id": "other"}])  # same seq
    async with sqlite_db.session() as session:  # the failed transaction left nothing behind
        count = await session.scalar(select(text("count(*)")).select_from(Message))
    assert count == 5
