"""Docs scopes: ingest documents as embedded chunks, and retrieve them within scopes.

Chunk rows live in doc_chunks; their vectors in the shared `embeddings` table through the
VectorIndex, collection "doc_chunk", key = the scope name (so a search never leaves the scopes
it was given). Re-ingesting a document (same scope and source) replaces all of its chunks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import structlog

from eko.chat.docs.chunking import chunk_text
from eko.embed.base import Embedder
from eko.store import doc_chunks as doc_repo
from eko.store.chat_models import DocChunk
from eko.store.db import Database
from eko.store.vectors import VectorIndex, VectorItem

log = structlog.get_logger("eko.chat")

COLLECTION = "doc_chunk"
SCOPE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
FORMATS = ("markdown", "text")


class InvalidScope(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class IngestResult:
    scope: str
    source: str
    chunks: int
    replaced: int


@dataclass(frozen=True, slots=True)
class ScopeInfo:
    name: str
    description: str
    chunks: int
    sources: int


@dataclass(frozen=True, slots=True)
class DocHit:
    chunk_id: str
    scope: str
    source: str
    title: str
    content: str
    score: float


@dataclass(frozen=True, slots=True)
class DocsLimits:
    max_scopes: int = 3
    max_chunks_per_scope: int = 8
    max_chunks: int = 20
    chunk_chars: int = 1000
    chunk_overlap: int = 150


def check_scope_name(name: str) -> str:
    if not SCOPE_NAME.match(name):
        raise InvalidScope(f"scope {name!r}: use 1-64 lowercase letters, digits, '.', '_' or '-'")
    return name


class DocsService:
    def __init__(
        self,
        *,
        database: Database,
        vectors: VectorIndex,
        embedder: Embedder,
        limits: DocsLimits | None = None,
    ) -> None:
        self._database = database
        self._vectors = vectors
        self._embedder = embedder
        self.limits = limits or DocsLimits()

    async def ingest(
        self,
        *,
        scope: str,
        source: str,
        text: str,
        fmt: str = "markdown",
        description: str | None = None,
    ) -> IngestResult:
        """Chunk, embed and store one document, replacing its previous chunks."""
        check_scope_name(scope)
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        source = source.strip()[:300]
        if not source:
            raise ValueError("a document needs a source name")
        chunks = chunk_text(
            text, fmt=fmt, max_chars=self.limits.chunk_chars, overlap=self.limits.chunk_overlap
        )
        # Embedding runs outside any transaction: no lock is held while the model works.
        vectors = (
            await self._embedder.embed([c.embedding_text for c in chunks], kind="passage")
            if chunks
            else np.zeros((0, self._embedder.dim), dtype=np.float32)
        )
        async with self._database.session() as session:
            scope_row = await doc_repo.ensure_scope(session, name=scope, description=description)
            old_ids = await doc_repo.chunk_ids_of_source(
                session, scope_id=scope_row.id, source=source
            )
            if old_ids:
                await self._vectors.delete(session, collection=COLLECTION, item_ids=old_ids)
                await doc_repo.delete_chunks(session, chunk_ids=old_ids)
                await session.flush()
            rows = [
                DocChunk(
                    scope_id=scope_row.id,
                    source=source,
                    position=chunk.position,
                    title=chunk.title,
                    content=chunk.content,
                    char_count=len(chunk.content),
                )
                for chunk in chunks
            ]
            session.add_all(rows)
            await session.flush()
            if rows:
                await self._vectors.upsert_many(
                    session,
                    collection=COLLECTION,
                    model=self._embedder.name,
                    items=[
                        VectorItem(item_id=row.id, key=scope, text=chunk.embedding_text)
                        for row, chunk in zip(rows, chunks, strict=True)
                    ],
                    vectors=vectors,
                )
        log.info(
            "docs.ingested", scope=scope, source=source, chunks=len(rows), replaced=len(old_ids)
        )
        return IngestResult(scope=scope, source=source, chunks=len(rows), replaced=len(old_ids))

    async def list_scopes(self) -> list[ScopeInfo]:
        async with self._database.session() as session:
            rows = await doc_repo.list_scopes(session)
        return [
            ScopeInfo(scope.name, scope.description, chunks, sources)
            for scope, chunks, sources in rows
        ]

    async def delete_scope(self, name: str) -> bool:
        async with self._database.session() as session:
            scope = await doc_repo.get_scope(session, name=name)
            if scope is None:
                return False
            ids = await doc_repo.chunk_ids_of_scope(session, scope_id=scope.id)
            await self._vectors.delete(session, collection=COLLECTION, item_ids=ids)
            await doc_repo.delete_chunks(session, chunk_ids=ids)
            await session.delete(scope)
        return True

    async def search(
        self,
        query: str,
        *,
        scopes: Sequence[str],
        per_scope: int | None = None,
        limit: int | None = None,
    ) -> list[DocHit]:
        """The chunks most similar to `query` within the scopes, under the hard caps:
        at most max_scopes scopes, max_chunks_per_scope per scope, max_chunks in all."""
        chosen = list(dict.fromkeys(scopes))[: self.limits.max_scopes]
        per_scope = min(
            per_scope or self.limits.max_chunks_per_scope, self.limits.max_chunks_per_scope
        )
        limit = min(limit or self.limits.max_chunks, self.limits.max_chunks)
        if not chosen or not query.strip():
            return []
        vector = (await self._embedder.embed([query], kind="query"))[0]
        async with self._database.session() as session:
            hits = []
            for scope in chosen:
                hits += await self._vectors.search(
                    session,
                    collection=COLLECTION,
                    model=self._embedder.name,
                    keys=[scope],
                    query=vector,
                    k=per_scope,
                )
            hits.sort(key=lambda hit: -hit.score)
            hits = hits[:limit]
            rows = await doc_repo.get_chunks(session, chunk_ids=[hit.item_id for hit in hits])
        return [
            DocHit(
                chunk_id=hit.item_id,
                scope=hit.key,
                source=rows[hit.item_id].source,
                title=rows[hit.item_id].title,
                content=rows[hit.item_id].content,
                score=round(hit.score, 4),
            )
            for hit in hits
            if hit.item_id in rows
        ]
