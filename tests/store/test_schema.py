"""Migrations and models describe the same schema, on both backends."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from eko.store.db import Database
from eko.store.message_search import is_search_object
from eko.store.migrate import current_revision, head_revision, is_up_to_date, upgrade
from eko.store.procrastinate_schema import is_job_queue_object
from eko.store.schema import Base


async def test_migrated_database_matches_models(database: Database) -> None:
    def diff(connection: Any) -> list[Any]:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        return [
            d
            for d in compare_metadata(context, Base.metadata)
            # sqlite-vec/pgvector index structures are created lazily, outside the models;
            # procrastinate's tables (PostgreSQL) come from its own SQL
            # (eko/store/procrastinate_schema.py);
            # the full-text index of messages from raw SQL (migration 0008).
            if not (
                isinstance(d, tuple)
                and (
                    str(getattr(d[1], "name", "")).startswith(("vec_", "ix_embeddings_hnsw"))
                    or is_search_object(str(getattr(d[1], "name", "")))
                    or is_job_queue_object(str(getattr(getattr(d[1], "table", d[1]), "name", "")))
                )
            )
        ]

    async with database.engine.connect() as connection:
        differences = await connection.run_sync(diff)
    assert differences == []


async def test_upgrade_is_idempotent_and_at_head(database: Database) -> None:
    await upgrade(database)
    assert await current_revision(database) == head_revision()
    assert await is_up_to_date(database)

    def tables(connection: Any) -> set[str]:
        return set(inspect(connection).get_table_names())

    async with database.engine.connect() as connection:
        names = await connection.run_sync(tables)
    assert {"users", "rooms", "room_members", "messages", "llm_calls", "embeddings"} <= names
