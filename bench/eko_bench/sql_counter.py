"""How many SQL statements and transactions a piece of work runs: SQLAlchemy events on the
database's engine, counted only while `counting` is on.

Deterministic where timings are not (a shared machine): `eko bench pipeline` prints the counts
per message next to its times, and tests/chat/test_round_trips.py keeps them from growing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event

from eko.store.db import Database


@dataclass
class SqlCount:
    statements: int = 0
    # Transactions begun: one per session that ran a statement (a connection round trip to
    # check out, begin, and commit or roll back).
    transactions: int = 0


class SqlCounter:
    """Listens on `database`'s engine from construction until `close`."""

    def __init__(self, database: Database) -> None:
        self._engine = database.engine.sync_engine
        self._current: SqlCount | None = None
        event.listen(self._engine, "before_cursor_execute", self._statement)
        event.listen(self._engine, "begin", self._begin)

    @contextmanager
    def counting(self) -> Iterator[SqlCount]:
        """What runs inside the block, counted into the yielded SqlCount."""
        count = SqlCount()
        self._current = count
        try:
            yield count
        finally:
            self._current = None

    def close(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._statement)
        event.remove(self._engine, "begin", self._begin)

    def _statement(self, *_args: Any) -> None:
        if self._current is not None:
            self._current.statements += 1

    def _begin(self, *_args: Any) -> None:
        if self._current is not None:
            self._current.transactions += 1
