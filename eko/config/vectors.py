"""Settings of the in-memory vector index: a section of eko.config.Settings (which inherits
it, so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class VectorMemorySettings(BaseModel):
    # --- in-memory vector search (eko/store/vectors/memory.py) ---
    # Collections searched in memory in front of the database's own index (kept in step on
    # every write, across workers through the event bus). Empty: every search goes to the
    # database. About 1.6 kB per 384-dim vector: ~155 MB per 100k memory-guard entries or
    # chat turns. "turn": each message's recall searches its room's turns (one partition per
    # room); on SQLite the database's own index (sqlite-vec) scans every vector of every
    # collection, ~20 ms at 10k turns (`eko bench recall`). The others ("memory" items,
    # "summary", "doc_chunk", "topic") are searched on every message too: through the
    # database each search was a round trip of 1-3 ms at 10k turns (`eko bench pipeline`).
    vector_memory_collections: list[str] = [
        "guard",
        "turn",
        "memory",
        "summary",
        "doc_chunk",
        "topic",
    ]
    # A partition (one collection, model and scope) loaded with more rows than this is split
    # into ~sqrt(n) cells and searched in the `vector_memory_probes` cells nearest the query:
    # ~20x less work at 100k rows, at a recall `eko bench guard --lookup` measures. 0: always
    # exact (one matrix product over the partition).
    vector_memory_exact_max_rows: int = Field(default=20_000, ge=0)
    vector_memory_probes: int = Field(default=16, ge=1, le=4096)
    # Memory cap for those in-memory vectors, in MiB: past it, each search drops the least
    # recently searched partitions (never one a search under way uses) until the vectors fit;
    # a dropped partition is read again from the database when next searched. Why: with
    # "turn" every room ever searched keeps a partition, so memory would grow with the number
    # of rooms for the process's life. Counts the vector and id arrays (Partition.nbytes);
    # item-id strings and maps add ~10% on top. 0: no cap.
    vector_memory_max_mb: int = Field(default=512, ge=0)
