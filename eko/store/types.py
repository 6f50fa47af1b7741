"""Column types that differ between SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import DateTime, LargeBinary
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine


class VectorColumn(TypeDecorator[Any]):
    """A float32 vector: pgvector `vector` on PostgreSQL, raw little-endian float32 bytes on SQLite.

    Python side it is always a 1-D float32 numpy array.
    """

    impl = LargeBinary
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(Vector())
        return dialect.type_descriptor(LargeBinary())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        array = np.asarray(value, dtype=np.float32).reshape(-1)
        if dialect.name == "postgresql":
            return array
        return array.tobytes()

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray | memoryview):
            return np.frombuffer(bytes(value), dtype=np.float32)
        return np.asarray(value, dtype=np.float32)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always an aware UTC datetime on the Python side, on both backends.

    SQLite has no time zone type: SQLAlchemy stores the wall-clock digits and reads them back
    naive, which the API would then serialise without an offset (not an RFC 3339 `date-time`).
    Values are stored as UTC (naive input is taken as UTC) and read back with `tzinfo=UTC`; on
    PostgreSQL it stays `timestamp with time zone`, so no migration is involved.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
