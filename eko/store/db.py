"""The database handle: one async engine and its session factory, passed to whoever needs it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from eko.store import sqlite_vec


class Database:
    """Owns the engine. SQLite gets WAL, foreign keys, a busy timeout and sqlite-vec."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        kwargs: dict[str, Any] = {"echo": echo, "pool_pre_ping": not url.startswith("sqlite")}
        if url.startswith("sqlite"):
            # sqlite-vec registers itself for every SQLite connection opened after this call.
            self.sqlite_vec_available = sqlite_vec.register()
        else:
            self.sqlite_vec_available = False
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        # PostgreSQL: no asyncpg codec for `vector` on purpose. pgvector's SQLAlchemy type
        # binds vectors as text ('[1.0,2.0]') and parses text results; a binary asyncpg codec
        # (pgvector.asyncpg.register_vector) rejects those strings ("expected list or
        # ndarray"), and it could only be registered on connections opened after the
        # extension exists, so pooled connections would disagree. Text I/O everywhere.

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session whose transaction commits on success and rolls back on error."""
        async with self.sessions() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    async def dispose(self) -> None:
        await self.engine.dispose()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers run while one writer writes; busy_timeout waits instead of failing.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
