"""SQLite vector search: sqlite-vec `vec0` tables, or exact NumPy search when sqlite-vec is missing.

The vec0 table of dimension d, `vec_embeddings_<d>`, mirrors the `embeddings` rows of that
dimension (rowid = embeddings.id) with the columns a search filters on. It is created lazily and
kept in step by the write paths of VectorIndex, not by triggers: a Python without sqlite-vec
(NumpyIndex) must still be able to write `embeddings` in the same file. Rows written while
sqlite-vec was unavailable are added back by `SqliteVecIndex.sync`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog
from sqlalchemy import bindparam, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Embedding
from eko.store.vectors.base import (
    WRITE_CHUNK,
    VectorHit,
    VectorIndex,
    VectorItem,
    VectorQuery,
    chunks,
    hits_from_rows,
)

# vec0 refuses k above this.
VEC0_MAX_K = 4096
_VEC_TABLE = re.compile(r"vec_embeddings_(\d+)")

log = structlog.get_logger("eko.store")


def vec_table(dim: int) -> str:
    return f"vec_embeddings_{int(dim)}"


class SqliteVecIndex(VectorIndex):
    backend = "sqlite-vec"
    exact = True  # vec0 scans every vector of the partition: exact, brute force in C

    def __init__(self) -> None:
        # Dimensions whose vec0 table was checked against `embeddings` in this process.
        self._checked_dims: set[int] = set()
        # Dimensions whose vec0 table a search found (the existence check is done once).
        self._seen_dims: set[int] = set()

    async def search_query(self, session: AsyncSession, query: VectorQuery) -> list[VectorHit]:
        dim = query.dim
        await self._check_once(session, dim)
        # Look the first time: the table may have been created in a transaction that then
        # rolled back. Once seen, it stays (nothing drops it): no lookup per search, and a
        # table gone all the same is forgotten below.
        if dim not in self._seen_dims:
            if not await _table_exists(session, vec_table(dim)):
                return []
            self._seen_dims.add(dim)
        # The KNN runs inside vec0 with every filter applied during the scan, so k rows come
        # back even when the key filter is selective; the join then fetches item ids.
        statement = text(
            f"""
            WITH knn AS (
                SELECT rowid, distance FROM {vec_table(query.dim)}
                WHERE embedding MATCH :query AND k = :k
                  AND collection = :collection AND model = :model AND key IN :keys
            )
            SELECT e.id, e.item_id, e.key, knn.distance
            FROM knn JOIN embeddings AS e ON e.id = knn.rowid
            """
        ).bindparams(bindparam("keys", expanding=True))
        try:
            result = await session.execute(
                statement,
                {
                    "query": query.vector.tobytes(),
                    "k": min(query.k, VEC0_MAX_K),
                    "collection": query.collection,
                    "model": query.model,
                    "keys": list(query.keys),
                },
            )
        except OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            self._seen_dims.discard(dim)  # its creation was rolled back: nothing to find
            return []
        return hits_from_rows(list(result.all()), query.min_score)

    async def sync(self, session: AsyncSession, *, full: bool = True) -> int:
        """Bring every vec0 table back in step with `embeddings`; returns the rows fixed.

        Needed after writes made without sqlite-vec (NumpyIndex on this same file). Rows
        added or deleted meanwhile are found by comparing ids, which is cheap and done
        automatically once per dimension and process; `full` also compares every stored
        vector and filter column, to catch rows replaced in place (seconds per 100k rows).
        """
        dims = set((await session.execute(select(Embedding.dim).distinct())).scalars())
        dims |= await _vec_table_dims(session)
        return sum([await self._sync_dim(session, dim, full=full) for dim in sorted(dims)])

    async def _check_once(self, session: AsyncSession, dim: int) -> None:
        if dim in self._checked_dims:
            return
        fixed = await self._sync_dim(session, dim, full=False)
        if fixed:
            log.warning("sqlite_vec.resynced", dim=dim, rows=fixed)

    async def _sync_dim(self, session: AsyncSession, dim: int, *, full: bool) -> int:
        table = vec_table(dim)
        await self._create_table(session, dim)
        stale = await session.execute(
            text(f"SELECT rowid FROM {table} EXCEPT SELECT id FROM embeddings WHERE dim = :dim"),
            {"dim": dim},
        )
        missing = await session.execute(
            text(f"SELECT id FROM embeddings WHERE dim = :dim EXCEPT SELECT rowid FROM {table}"),
            {"dim": dim},
        )
        stale_ids, missing_ids = list(stale.scalars()), list(missing.scalars())
        if full:
            changed = await session.execute(
                text(
                    f"SELECT e.id FROM embeddings AS e JOIN {table} AS v ON v.rowid = e.id "
                    "WHERE e.dim = :dim AND (v.embedding != e.vector OR v.key != e.key "
                    "OR v.model != e.model OR v.collection != e.collection)"
                ),
                {"dim": dim},
            )
            changed_ids = list(changed.scalars())
            stale_ids += changed_ids
            missing_ids += changed_ids
        await _delete_rowids(session, table, stale_ids)
        for chunk in chunks(missing_ids, WRITE_CHUNK):
            rows = await session.execute(
                select(
                    Embedding.id,
                    Embedding.collection,
                    Embedding.model,
                    Embedding.key,
                    Embedding.vector,
                ).where(Embedding.id.in_(chunk))
            )
            await _insert_vec_rows(session, table, [tuple(row) for row in rows.all()])
        self._checked_dims.add(dim)
        return len(set(stale_ids) | set(missing_ids))

    async def _prepare_write(self, session: AsyncSession, dim: int) -> None:
        await self._create_table(session, dim)
        await self._check_once(session, dim)

    async def _create_table(self, session: AsyncSession, dim: int) -> None:
        # `collection` is a partition key: vec0 stores each collection's vectors apart, so a
        # search scans only its own collection.
        await session.execute(
            text(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {vec_table(dim)} USING vec0("
                "collection text partition key, "
                f"embedding float[{int(dim)}] distance_metric=cosine, "
                "model text, key text)"
            )
        )

    async def _unindex(self, session: AsyncSession, collection: str, item_ids: list[str]) -> None:
        result = await session.execute(
            select(Embedding.id, Embedding.dim).where(
                Embedding.collection == collection, Embedding.item_id.in_(item_ids)
            )
        )
        by_dim: dict[int, list[int]] = {}
        for row_id, dim in result.all():
            by_dim.setdefault(dim, []).append(row_id)
        for dim, ids in by_dim.items():
            if await _table_exists(session, vec_table(dim)):
                await _delete_rowids(session, vec_table(dim), ids)

    async def _index(
        self,
        session: AsyncSession,
        ids: list[int],
        collection: str,
        model: str,
        items: list[VectorItem],
        vectors: np.ndarray,
    ) -> None:
        rows = [
            (row_id, collection, model, item.key, vector)
            for row_id, item, vector in zip(ids, items, vectors, strict=True)
        ]
        table = vec_table(vectors.shape[1])
        # The embeddings upsert keeps a replaced row's id, and `_unindex` looked before this
        # transaction held the write lock: a concurrent writer of the same items (two requests
        # catching up one room's turns) may have added their vec0 rows since, and vec0 has no
        # upsert. Cleared here, under the write lock; a rowid not there costs a point lookup.
        await _delete_rowids(session, table, ids)
        await _insert_vec_rows(session, table, rows)


class NumpyIndex(VectorIndex):
    """Exact search: the filtered rows' vectors are loaded and scored with one matrix product.

    The fallback when sqlite-vec cannot load; fine while one search scope holds tens of
    thousands of vectors, slower beyond (every search reads its whole scope).
    """

    backend = "numpy"
    exact = True

    async def search_query(self, session: AsyncSession, query: VectorQuery) -> list[VectorHit]:
        result = await session.execute(
            select(Embedding.id, Embedding.item_id, Embedding.key, Embedding.vector).where(
                Embedding.collection == query.collection,
                Embedding.model == query.model,
                Embedding.dim == query.dim,
                Embedding.key.in_(list(query.keys)),
            )
        )
        rows = list(result.all())
        if not rows:
            return []
        matrix = np.stack([row[3] for row in rows])
        # Stored rows are unit vectors already; dividing keeps scores exact cosines regardless.
        scores = (matrix @ query.vector) / np.linalg.norm(matrix, axis=1)
        top = np.argsort(-scores, kind="stable")[: query.k]
        return hits_from_rows(
            [(rows[i][0], rows[i][1], rows[i][2], 1.0 - float(scores[i])) for i in top],
            query.min_score,
        )


async def _vec_table_dims(session: AsyncSession) -> set[int]:
    result = await session.execute(
        text("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'vec_embeddings_%'")
    )
    # vec0 keeps shadow tables beside each (vec_embeddings_384_chunks, ...): skip them.
    return {int(m.group(1)) for name in result.scalars() if (m := _VEC_TABLE.fullmatch(name))}


async def _table_exists(session: AsyncSession, name: str) -> bool:
    result = await session.execute(
        text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"), {"name": name}
    )
    return result.first() is not None


async def _delete_rowids(session: AsyncSession, table: str, ids: list[int]) -> None:
    if ids:
        # One statement per rowid: the point lookup vec0 serves directly.
        await session.execute(
            text(f"DELETE FROM {table} WHERE rowid = :rowid"), [{"rowid": i} for i in ids]
        )


async def _insert_vec_rows(
    session: AsyncSession, table: str, rows: Sequence[tuple[Any, ...]]
) -> None:
    if rows:
        await session.execute(
            text(
                f"INSERT INTO {table}(rowid, collection, model, key, embedding) "
                "VALUES (:rowid, :collection, :model, :key, :embedding)"
            ),
            [
                {
                    "rowid": row_id,
                    "collection": collection,
                    "model": model,
                    "key": key,
                    "embedding": np.asarray(vector, dtype=np.float32).tobytes(),
                }
                for row_id, collection, model, key, vector in rows
            ],
        )
