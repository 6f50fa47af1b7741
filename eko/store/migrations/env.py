"""Alembic environment: runs on the connection handed over by eko.store.migrate."""

from __future__ import annotations

from alembic import context

from eko.store.schema import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `eko db upgrade` (eko.store.migrate)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
