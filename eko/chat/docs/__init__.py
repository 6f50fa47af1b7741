"""Docs scopes: product documentation chunked, embedded per scope, retrieved by similarity."""

from eko.chat.docs.chunking import Chunk, chunk_text
from eko.chat.docs.service import (
    COLLECTION,
    DocHit,
    DocsLimits,
    DocsService,
    IngestResult,
    InvalidScope,
    ScopeInfo,
    check_scope_name,
)

__all__ = [
    "COLLECTION",
    "Chunk",
    "DocHit",
    "DocsLimits",
    "DocsService",
    "IngestResult",
    "InvalidScope",
    "ScopeInfo",
    "check_scope_name",
    "chunk_text",
]
