"""Vector search for every feature (memory guard, doc chunks, memory items, summaries): the
names callers import, and the factory that picks a backend.

    base.py         the interface (VectorIndex) and its types
    rows.py         the SQL writing `embeddings` rows
    sqlite.py       sqlite-vec `vec0` tables; exact NumPy search when sqlite-vec is missing
    pg.py           pgvector, one HNSW index per dimension
    memory.py       chosen collections held in memory in front of another backend
    memory_read.py  the reads that fill and refresh the in-memory partitions
    partition.py    one in-memory partition (one float32 matrix)
    ivf.py          the cells a large partition is split into
    lru.py          the in-memory partitions, least recently searched dropped first
    changes.py      the feed of changes that keeps other processes' partitions in step
    build.py        the factory
"""

from eko.store.vectors.base import (
    WRITE_CHUNK,
    Kind,
    ReembedProgress,
    SessionFactory,
    TextEmbedder,
    VectorHit,
    VectorIndex,
    VectorItem,
    VectorQuery,
    chunks,
    hits_from_rows,
    query_vector,
    unit_rows,
)
from eko.store.vectors.build import build_memory_index, build_vector_index

__all__ = [
    "WRITE_CHUNK",
    "Kind",
    "ReembedProgress",
    "SessionFactory",
    "TextEmbedder",
    "VectorHit",
    "VectorIndex",
    "VectorItem",
    "VectorQuery",
    "build_memory_index",
    "build_vector_index",
    "chunks",
    "hits_from_rows",
    "query_vector",
    "unit_rows",
]
