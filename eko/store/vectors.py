"""Vector search for every feature (memory guard, doc chunks, memory items, summaries): the
factory that picks a backend, and the names callers import.

    vectors_base.py       the interface (VectorIndex) and its types
    vectors_rows.py       the SQL writing `embeddings` rows
    vectors_sqlite.py     sqlite-vec `vec0` tables; exact NumPy search when sqlite-vec is missing
    vectors_pg.py         pgvector, one HNSW index per dimension
    vectors_memory.py     chosen collections held in memory in front of another backend
    vectors_partition.py  one in-memory partition (one float32 matrix)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from eko.store.vectors_base import (
    WRITE_CHUNK,
    Kind,
    ReembedProgress,
    SessionFactory,
    TextEmbedder,
    VectorHit,
    VectorIndex,
    VectorItem,
    chunks,
    hits_from_rows,
    query_vector,
    unit_rows,
)
from eko.store.vectors_changes import ChangeFeed
from eko.store.vectors_memory import MemoryVectorIndex
from eko.store.vectors_pg import PgVectorIndex
from eko.store.vectors_sqlite import NumpyIndex, SqliteVecIndex

if TYPE_CHECKING:
    from eko.config import Settings
    from eko.store.db import Database

__all__ = [
    "WRITE_CHUNK",
    "Kind",
    "ReembedProgress",
    "SessionFactory",
    "TextEmbedder",
    "VectorHit",
    "VectorIndex",
    "VectorItem",
    "build_memory_index",
    "build_vector_index",
    "chunks",
    "hits_from_rows",
    "query_vector",
    "unit_rows",
]

log = structlog.get_logger("eko.store")


def build_vector_index(database: Database, settings: Settings) -> VectorIndex:
    """The backend for this database: pgvector on PostgreSQL; sqlite-vec, else NumPy, on SQLite."""
    if database.dialect == "postgresql":
        if settings.vector_backend != "auto":
            log.info("vectors.backend_ignored", setting=settings.vector_backend, using="pgvector")
        index = PgVectorIndex(ef_search=settings.pg_hnsw_ef_search)
        index.tune_connections(database.engine)
        return index
    if settings.vector_backend == "numpy":
        return NumpyIndex()
    if database.sqlite_vec_available:
        return SqliteVecIndex()
    if settings.vector_backend == "sqlite-vec":
        raise RuntimeError(
            "EKO_VECTOR_BACKEND=sqlite-vec but sqlite-vec cannot be loaded in this Python "
            "(see the eko.store log); use 'auto' or 'numpy' to fall back to exact NumPy search"
        )
    log.warning(
        "vectors.numpy_fallback",
        reason="sqlite-vec could not be loaded",
        effect="exact NumPy search: fine to ~50k vectors per search scope, slower beyond",
    )
    return NumpyIndex()


def build_memory_index(
    inner: VectorIndex, settings: Settings, *, feed: ChangeFeed | None, shared_feed: bool
) -> VectorIndex:
    """`inner` with the collections of EKO_VECTOR_MEMORY_COLLECTIONS searched in memory (none:
    `inner` itself). `shared_feed`: the feed reaches every process (PostgreSQL's bus); when it
    does not, searches also poll for rows added by other processes."""
    collections = frozenset(settings.vector_memory_collections)
    if not collections:
        return inner
    return MemoryVectorIndex(
        inner,
        collections=collections,
        feed=feed,
        poll_new_rows=not shared_feed,
        approximate_above=settings.vector_memory_exact_max_rows,
        probes=settings.vector_memory_probes,
        max_bytes=settings.vector_memory_max_mb * 1024 * 1024,
    )
