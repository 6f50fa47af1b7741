"""Apply and inspect migrations programmatically (used by `eko db upgrade`, serve and tests)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection

from eko.store.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
VERSION_TABLE = "alembic_version"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


@lru_cache(maxsize=1)
def head_revision() -> str | None:
    # Parsing every migration file takes tens of ms; the files do not change while running.
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(database: Database, revision: str = "head") -> None:
    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with database.engine.begin() as connection:
        await connection.run_sync(run)


async def current_revision(database: Database, *, probe: bool = False) -> str | None:
    """The database's schema revision. `probe`: on the health-check connection, which never
    waits behind a busy pool."""

    engine = database.probe_engine if probe else database.engine
    async with engine.connect() as connection:
        revision: str | None = await connection.run_sync(read_revision)
        return revision


def read_revision(connection: Connection) -> str | None:
    """The revision in alembic's version table, read without alembic's MigrationContext, which
    logs two INFO lines each time it is configured: the health probe reads this every second."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(rows) > 1:
        raise RuntimeError(f"several migration heads in {VERSION_TABLE}: {sorted(rows)}")
    return str(rows[0]) if rows else None


async def is_up_to_date(database: Database, *, probe: bool = False) -> bool:
    return await current_revision(database, probe=probe) == head_revision()
