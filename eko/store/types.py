"""Column types that differ between SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import numpy as np
from pgvector.sqlalchemy import Vector
from sqlalchemy import LargeBinary
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
