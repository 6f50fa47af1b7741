"""A connection goes back to the pool with no transaction open, on both backends (on SQLite a
rollback is issued only when one is still open: eko.store.db._sqlite_reset)."""

from __future__ import annotations

from sqlalchemy import Connection, func, select, text

from eko.store.db import Database
from eko.store.models import User


async def _users(database: Database) -> int:
    async with database.session() as session:
        return int((await session.execute(select(func.count()).select_from(User))).scalar_one())


async def test_what_was_not_committed_never_reaches_the_next_borrower(database: Database) -> None:
    before = await _users(database)
    insert = text(
        "INSERT INTO users (public_id, display_name, role, api_key_hash, is_pro, "
        "free_quota_used, free_quota_limit, settings, created_at) "
        "VALUES (:p, 'x', 'member', :p, false, 0, 8, '{}', CURRENT_TIMESTAMP)"
    )
    async with database.sessions() as session:  # closed without a commit
        await session.execute(insert, {"p": "a" * 32})
    async with database.engine.connect() as connection:  # closed without a commit
        await connection.execute(insert, {"p": "b" * 32})

    # The driver's own connection, left in a transaction: the pool's reset ends it.
    def dirty(sync_connection: Connection) -> None:
        cursor = sync_connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(insert.text.replace(":p", "'" + "c" * 32 + "'"))
        cursor.close()

    async with database.engine.connect() as connection:
        await connection.run_sync(dirty)
    for _ in range(3):  # whichever pooled connection comes next
        assert await _users(database) == before
    async with database.session() as session:  # committed: kept
        await session.execute(insert, {"p": "d" * 32})
    assert await _users(database) == before + 1
