"""The SQL that writes `embeddings` rows, shared by every vector backend.

One upsert per batch on (collection, item_id); pgvector's text form built fast for PostgreSQL.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import numpy as np
from sqlalchemy import Text, bindparam, cast, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Embedding

# Rows per statement: stays under SQLite's bound-parameter limit and bounds one statement's size.
WRITE_CHUNK = 500
# What an upsert of an existing (collection, item_id) replaces.
REPLACED = ("key", "model", "dim", "text", "vector")


def chunks(values: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form, '[0.1,-0.2,…]', built fast (bulk writes format ~1M floats).

    9 significant digits round-trip every float32 exactly; one `%` over a cached template is
    ~2x faster than str(list) and pgvector's own per-float formatting.
    """
    values = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()
    return _template(len(values)) % tuple(values)


@functools.cache
def _template(dim: int) -> str:
    return "[" + ",".join(["%.9g"] * dim) + "]"


async def write_rows(
    session: AsyncSession, collection: str, rows: list[dict[str, Any]]
) -> list[int]:
    """INSERT … ON CONFLICT (collection, item_id) DO UPDATE; returns ids in row order.

    A replaced row keeps its id (and created_at); only its content changes.
    """
    if session.get_bind().dialect.name == "postgresql":
        from pgvector.sqlalchemy import Vector
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        # Bulk writes send pgvector's text form, formatted here several times faster than
        # the column type's own conversion (which dominated the cost of a batch).
        rows = [{**row, "vector": vector_literal(row["vector"])} for row in rows]
        pg_statement = pg_insert(Embedding).values(
            vector=cast(bindparam("vector", type_=Text), Vector())
        )
        pg_upsert = pg_statement.on_conflict_do_update(
            index_elements=[Embedding.collection, Embedding.item_id],
            set_={name: pg_statement.excluded[name] for name in REPLACED},
        ).returning(Embedding.id, sort_by_parameter_order=True)
        # RETURNING in parameter order is batched on PostgreSQL. (Reading the ids back with
        # a SELECT instead degrades as the table grows within one transaction: the prepared
        # statement's generic plan, made while the table was small, scans it.)
        return [int(row_id) for row_id in (await session.execute(pg_upsert, rows)).scalars()]

    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    statement = sqlite_insert(Embedding)
    upsert = statement.on_conflict_do_update(
        index_elements=[Embedding.collection, Embedding.item_id],
        set_={name: statement.excluded[name] for name in REPLACED},
    )
    # No RETURNING here: SQLAlchemy keeps RETURNING rows in parameter order for this upsert on
    # SQLite only by running it row by row (~10x slower); one SELECT on the unique key is cheap.
    await session.execute(upsert, rows)
    item_ids = [row["item_id"] for row in rows]
    result = await session.execute(
        select(Embedding.item_id, Embedding.id).where(
            Embedding.collection == collection, Embedding.item_id.in_(item_ids)
        )
    )
    id_of: dict[str, int] = {item_id: int(row_id) for item_id, row_id in result.all()}
    return [id_of[item_id] for item_id in item_ids]
