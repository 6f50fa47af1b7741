"""aiosqlite with one trip to the connection's thread per statement.

aiosqlite runs each sqlite3 call on the connection's own thread, and SQLAlchemy's adapter makes
four such calls per statement: open a cursor, execute, fetch the rows, close the cursor. Each
trip is a queue hand-off to that thread and a wake-up of the event loop; on the message path
(~35 statements) they were most of SQLite's share of the pipeline's overhead. Here the cursor
does all four in one call: the statement runs, its rows are fetched and its sqlite3 cursor
closed on the thread, and the adapter then reads what was kept (description, rowcount,
lastrowid, rows) without another trip. Same SQL, same results; a transaction still commits or
rolls back in one trip of its own.

Wired by eko/store/db.py through SQLAlchemy's `async_creator_fn` connect argument, which the
aiosqlite dialect calls with the arguments it would have given `aiosqlite.connect`.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import aiosqlite

_Result = tuple[Any, int, int | None, list[Any]]


class OneTripCursor:
    """The part of a cursor SQLAlchemy's aiosqlite adapter uses, one thread trip a statement."""

    def __init__(self, connection: OneTripConnection) -> None:
        self._connection = connection
        self.arraysize = 1
        self.description: Any = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self._rows: deque[Any] = deque()

    async def __aenter__(self) -> OneTripCursor:
        return self  # no sqlite3 cursor yet: each statement opens and closes its own

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def execute(self, sql: str, parameters: Any = None) -> OneTripCursor:
        return self._keep(await self._connection.run(_execute, sql, parameters))

    async def executemany(self, sql: str, parameters: Iterable[Any]) -> OneTripCursor:
        return self._keep(await self._connection.run(_executemany, sql, parameters))

    async def fetchone(self) -> Any:
        return self._rows.popleft() if self._rows else None

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        count = min(len(self._rows), self.arraysize if size is None else size)
        return [self._rows.popleft() for _ in range(count)]

    async def fetchall(self) -> list[Any]:
        rows = list(self._rows)
        self._rows.clear()
        return rows

    async def close(self) -> None:
        self._rows.clear()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Any]:
        while self._rows:
            yield self._rows.popleft()

    def _keep(self, result: _Result) -> OneTripCursor:
        self.description, self.rowcount, self.lastrowid, rows = result
        self._rows = deque(rows)
        return self


class OneTripConnection(aiosqlite.Connection):
    """An aiosqlite connection whose cursors make one thread trip per statement."""

    def cursor(self) -> OneTripCursor:  # type: ignore[override]
        return OneTripCursor(self)

    async def run(self, fn: Callable[..., _Result], *args: Any) -> _Result:
        """`fn(sqlite3_connection, *args)` on the connection's thread."""
        result: _Result = await self._execute(fn, self._conn, *args)
        return result


def connect(database: str | Path, *, iter_chunk_size: int = 64, **kwargs: Any) -> Any:
    """What `aiosqlite.connect` does, with OneTripConnection (awaited by the dialect)."""
    location = database.decode() if isinstance(database, bytes) else str(database)

    def connector() -> sqlite3.Connection:
        return sqlite3.connect(location, **kwargs)

    connection = OneTripConnection(connector, iter_chunk_size)
    connection._thread.daemon = True  # as SQLAlchemy does for aiosqlite's own
    return connection


def _execute(connection: sqlite3.Connection, sql: str, parameters: Any) -> _Result:
    cursor = connection.cursor()
    try:
        cursor.execute(sql, () if parameters is None else parameters)
        rows = cursor.fetchall() if cursor.description else []
        return cursor.description, cursor.rowcount, cursor.lastrowid, rows
    finally:
        cursor.close()


def _executemany(
    connection: sqlite3.Connection, sql: str, parameters: Iterable[Sequence[Any]]
) -> _Result:
    cursor = connection.cursor()
    try:
        cursor.executemany(sql, parameters)
        return cursor.description, cursor.rowcount, cursor.lastrowid, []
    finally:
        cursor.close()
