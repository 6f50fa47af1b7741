"""The database handle: one async engine and its session factory, passed to whoever needs it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import PoolResetState, event
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from eko.store import sqlite_driver, sqlite_vec
from eko.store.locks import KeyedLocks

if TYPE_CHECKING:
    from eko.config import StorageSettings


@dataclass(frozen=True, slots=True)
class PoolLimits:
    """How many connections the engine keeps, lends on top, and how long a borrower waits."""

    size: int = 10
    max_overflow: int = 10
    timeout_s: float = 10.0


class Database:
    """Owns the engine. SQLite gets WAL, foreign keys, a busy timeout and sqlite-vec.

    Also owns the in-process write locks (`keyed_locks`): appends to one room are serialized
    here so concurrent posts do not fight for the next sequence number.
    """

    def __init__(self, url: str, *, echo: bool = False, pool: PoolLimits | None = None) -> None:
        self.url = url
        self.pool_limits = pool or PoolLimits()
        self.keyed_locks = KeyedLocks()
        kwargs: dict[str, Any] = {"echo": echo, "pool_pre_ping": not url.startswith("sqlite")}
        if ":memory:" not in url and "mode=memory" not in url:
            # An in-memory SQLite database is one shared connection (no pool to size).
            kwargs.update(
                pool_size=self.pool_limits.size,
                max_overflow=self.pool_limits.max_overflow,
                pool_timeout=self.pool_limits.timeout_s,
            )
        if url.startswith("sqlite"):
            # sqlite-vec registers itself for every SQLite connection opened after this call.
            self.sqlite_vec_available = sqlite_vec.register()
            # A connection going back to the pool is rolled back only when a transaction is
            # still open (_sqlite_reset), not after every commit: each rollback is a round trip
            # to the connection's thread, one per session.
            kwargs["pool_reset_on_return"] = None
            # One trip to the connection's thread per statement instead of four.
            kwargs["connect_args"] = {"async_creator_fn": sqlite_driver.connect}
        else:
            self.sqlite_vec_available = False
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self._probe_engine: AsyncEngine | None = None
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.engine.sync_engine, "reset", _sqlite_reset)
        # PostgreSQL: no asyncpg codec for `vector` on purpose. pgvector's SQLAlchemy type
        # binds vectors as text ('[1.0,2.0]') and parses text results; a binary asyncpg codec
        # (pgvector.asyncpg.register_vector) rejects those strings ("expected list or
        # ndarray"), and it could only be registered on connections opened after the
        # extension exists, so pooled connections would disagree. Text I/O everywhere.

    @property
    def probe_engine(self) -> AsyncEngine:
        """A one-connection engine for /health: a check that never queues behind the
        requests it reports on (made on first use)."""
        if self._probe_engine is None:
            kwargs: dict[str, Any] = {}
            if ":memory:" not in self.url and "mode=memory" not in self.url:
                kwargs.update(pool_size=1, max_overflow=0, pool_timeout=2.0)
            if self.dialect == "sqlite":
                kwargs["connect_args"] = {"async_creator_fn": sqlite_driver.connect}
            self._probe_engine = create_async_engine(self.url, **kwargs)
        return self._probe_engine

    @classmethod
    def from_settings(cls, settings: StorageSettings) -> Database:
        return cls(
            settings.database_url,
            pool=PoolLimits(
                size=settings.db_pool_size,
                max_overflow=settings.db_max_overflow,
                timeout_s=settings.db_pool_timeout_s,
            ),
        )

    def pool_status(self) -> dict[str, int]:
        """Connections checked out and idle, for /health."""
        pool = self.engine.pool
        checked_out = getattr(pool, "checkedout", None)
        idle = getattr(pool, "checkedin", None)
        return {
            "size": self.pool_limits.size,
            "max_overflow": self.pool_limits.max_overflow,
            "checked_out": int(checked_out()) if callable(checked_out) else 0,
            "idle": int(idle()) if callable(idle) else 0,
        }

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
        if self._probe_engine is not None:
            await self._probe_engine.dispose()


def _sqlite_reset(dbapi_connection: Any, _record: Any, state: PoolResetState) -> None:
    """What reset-on-return "rollback" does, minus the rollback of no transaction."""
    if not state.asyncio_safe or state.transaction_was_reset:
        return  # as SQLAlchemy's own reset: no I/O outside the event loop; already ended
    driver = getattr(dbapi_connection, "driver_connection", None)
    if getattr(driver, "in_transaction", True):
        dbapi_connection.rollback()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers run while one writer writes; busy_timeout waits instead of failing.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
