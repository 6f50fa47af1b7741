"""Migration 0014 on a database that has users: every API key in use keeps working, now as an
"initial" key in api_keys (on both backends)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from eko.store import api_keys as key_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.migrate import upgrade
from tests import pg
from tests.conftest import run_isolated


@pytest.fixture
def blank_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """An empty database, not migrated."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
        return
    server = pg._with_database(str(request.getfixturevalue("pg_database_url")), "postgres")
    url = run_isolated(pg.create_database(server))
    yield url
    run_isolated(pg.drop_database(server, url))


async def test_keys_stored_before_0014_keep_working(blank_url: str) -> None:
    database = Database(blank_url)
    try:
        await upgrade(database, "0013")
        key = user_repo.new_api_key()
        async with database.session() as session:
            await session.execute(
                text(
                    "INSERT INTO users (public_id, display_name, role, api_key_hash, is_pro, "
                    "free_quota_used, free_quota_limit, settings, created_at) "
                    "VALUES (:p, 'Ancien', 'staff', :h, false, 0, 8, '{}', CURRENT_TIMESTAMP)"
                ),
                {"p": "a" * 32, "h": user_repo.hash_api_key(key)},
            )
        await upgrade(database)
        async with database.session() as session:
            user = await user_repo.get_by_api_key(session, api_key=key)
            assert user is not None and user.display_name == "Ancien"
            assert user.password_hash is None and user.login_name is None
            keys = await key_repo.list_keys(session, user_id=user.id)
            assert [(k.name, k.revoked_at) for k in keys] == [("initial", None)]
            await key_repo.revoke_key(session, user_id=user.id, key_id=keys[0].public_id)
        async with database.session() as session:
            assert await user_repo.get_by_api_key(session, api_key=key) is None
    finally:
        await database.dispose()
