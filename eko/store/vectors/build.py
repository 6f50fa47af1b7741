"""The factory that picks a vector backend for a database (see eko.store.vectors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from eko.store.vectors.base import VectorIndex
from eko.store.vectors.changes import ChangeFeed
from eko.store.vectors.memory import MemoryVectorIndex
from eko.store.vectors.pg import PgVectorIndex
from eko.store.vectors.sqlite import NumpyIndex, SqliteVecIndex

if TYPE_CHECKING:
    from eko.config import Settings
    from eko.store.db import Database

__all__ = ["build_memory_index", "build_vector_index"]

log = structlog.get_logger("eko.store")

# Where the event bus does not reach other processes (SQLite with a separate `eko worker` or
# `eko docs` run), a search polls for their new rows: at most once per this many seconds, so
# a message's five or so searches make one poll, not five round trips (`eko bench pipeline`);
# another process's row is searchable within this delay.
POLL_INTERVAL_S = 0.5


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
        poll_interval_s=POLL_INTERVAL_S,
        approximate_above=settings.vector_memory_exact_max_rows,
        probes=settings.vector_memory_probes,
        max_bytes=settings.vector_memory_max_mb * 1024 * 1024,
    )
