"""Apply and inspect migrations programmatically (used by `eko db upgrade`, serve and tests)."""

from __future__ import annotations

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


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


async def upgrade(database: Database, revision: str = "head") -> None:
    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with database.engine.begin() as connection:
        await connection.run_sync(run)


async def current_revision(database: Database) -> str | None:
    def read(connection: Connection) -> Any:
        return MigrationContext.configure(connection).get_current_revision()

    async with database.engine.connect() as connection:
        revision: str | None = await connection.run_sync(read)
        return revision


async def is_up_to_date(database: Database) -> bool:
    return await current_revision(database) == head_revision()
