"""Alembic environment: runs on the connection handed over by eko.store.migrate."""

from __future__ import annotations

from typing import Any

from alembic import context

from eko.store.message_search import is_search_object
from eko.store.procrastinate_schema import is_job_queue_object
from eko.store.schema import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `eko db upgrade` (eko.store.migrate)")


def include_name(name: str | None, type_: Any, parents: Any) -> bool:
    # procrastinate's tables (PostgreSQL) come from its own SQL, not from Eko's models; the
    # full-text index of messages (0008) from raw SQL too.
    if is_search_object(name):
        return False
    if type_ == "table":
        return not is_job_queue_object(name)
    return not is_job_queue_object(parents.get("table_name"))


context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    include_name=include_name,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
