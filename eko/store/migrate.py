"""Apply and inspect migrations programmatically (used by `eko db upgrade`, serve and tests)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

from eko.store.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


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

    def read(connection: Connection) -> Any:
        return MigrationContext.configure(connection).get_current_revision()

    engine = database.probe_engine if probe else database.engine
    async with engine.connect() as connection:
        revision: str | None = await connection.run_sync(read)
        return revision


async def is_up_to_date(database: Database, *, probe: bool = False) -> bool:
    return await current_revision(database, probe=probe) == head_revision()
