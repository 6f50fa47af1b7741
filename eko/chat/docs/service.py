"""Docs scopes: ingest documents as embedded chunks, and retrieve them within scopes.

Chunk rows live in doc_chunks; their vectors in the shared `embeddings` table through the
VectorIndex, collection "doc_chunk", key = the scope name (so a search never leaves the scopes
it was given). Re-ingesting a document (same scope and source) replaces all of its chunks.

A room's own scope ("room.<room id>", doc_scopes.room_id set) holds the files attached to that
room (eko/chat/docs/attachments.py). The prefix is reserved: a shared scope cannot take it, the
listings leave room scopes out, and a search drops every room scope but the one of the room it
is made for (`room_id`), so a room's files never reach another room or the shared routes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.docs.chunking import Chunk, chunk_text
from eko.embed.base import Embedder
from eko.store import doc_chunks as doc_repo
from eko.store.chat_models import DocChunk
from eko.store.db import Database
from eko.store.vectors import VectorIndex, VectorItem

log = structlog.get_logger("eko.chat")

COLLECTION = "doc_chunk"
SCOPE_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
FORMATS = ("markdown", "text")
ROOM_SCOPE_PREFIX = "room."


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


@dataclass(frozen=True, slots=True)
class Prepared:
    """A document chunked and embedded, ready to store (no transaction held meanwhile)."""

    chunks: list[Chunk]
    vectors: np.ndarray


def check_scope_name(name: str) -> str:
    """A shared scope's name: the pattern, and not a room's reserved prefix."""
    if not SCOPE_NAME.match(name):
        raise InvalidScope(f"scope {name!r}: use 1-64 lowercase letters, digits, '.', '_' or '-'")
    if is_room_scope(name):
        raise InvalidScope(f"scope {name!r}: names starting {ROOM_SCOPE_PREFIX!r} are reserved")
    return name


def room_scope(room_id: str) -> str:
    """The name of a room's own scope (its attachments)."""
    return f"{ROOM_SCOPE_PREFIX}{room_id.lower()}"


def is_room_scope(name: str) -> bool:
    return name.startswith(ROOM_SCOPE_PREFIX)


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
        """Chunk, embed and store one document of a shared scope, replacing its previous
        chunks."""
        check_scope_name(scope)
        source = _source_name(source)
        prepared = await self.prepare(text, fmt=fmt)
        async with self._database.session() as session:
            replaced = await self.store(
                session, scope=scope, source=source, prepared=prepared, description=description
            )
        return IngestResult(
            scope=scope, source=source, chunks=len(prepared.chunks), replaced=replaced
        )

    async def prepare(self, text: str, *, fmt: str = "markdown") -> Prepared:
        """Chunk and embed a document's text. Embedding runs outside any transaction: no lock
        is held while the model works."""
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}")
        chunks = chunk_text(
            text, fmt=fmt, max_chars=self.limits.chunk_chars, overlap=self.limits.chunk_overlap
        )
        vectors = (
            await self._embedder.embed([c.embedding_text for c in chunks], kind="passage")
            if chunks
            else np.zeros((0, self._embedder.dim), dtype=np.float32)
        )
        return Prepared(chunks, vectors)

    async def store(
        self,
        session: AsyncSession,
        *,
        scope: str,
        source: str,
        prepared: Prepared,
        description: str | None = None,
        room_id: str | None = None,
    ) -> int:
        """Store a prepared document in `session` (the scope created if new: a room's own when
        `room_id` is given), replacing the source's chunks. Returns how many it replaced."""
        if room_id is not None and scope != room_scope(room_id):
            raise InvalidScope(f"scope {scope!r} is not room {room_id}'s")
        scope_row = await doc_repo.ensure_scope(
            session, name=scope, description=description, room_id=room_id
        )
        replaced = await self.delete_source(session, scope_id=scope_row.id, source=source)
        rows = [
            DocChunk(
                scope_id=scope_row.id,
                source=source,
                position=chunk.position,
                title=chunk.title,
                content=chunk.content,
                char_count=len(chunk.content),
            )
            for chunk in prepared.chunks
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
                    for row, chunk in zip(rows, prepared.chunks, strict=True)
                ],
                vectors=prepared.vectors,
            )
        log.info("docs.ingested", scope=scope, source=source, chunks=len(rows), replaced=replaced)
        return replaced

    async def delete_source(self, session: AsyncSession, *, scope_id: str, source: str) -> int:
        """Delete one document's chunks and vectors in `session`; returns how many went."""
        old_ids = await doc_repo.chunk_ids_of_source(session, scope_id=scope_id, source=source)
        if old_ids:
            await self._vectors.delete(session, collection=COLLECTION, item_ids=old_ids)
            await doc_repo.delete_chunks(session, chunk_ids=old_ids)
            await session.flush()
        return len(old_ids)

    async def list_scopes(self, *, room_id: str | None = None) -> list[ScopeInfo]:
        """The shared scopes, and first `room_id`'s own scope when named and it exists."""
        async with self._database.session() as session:
            rows = await doc_repo.list_scopes(session, room_id=room_id)
        rows = sorted(rows, key=lambda row: row[0].room_id is None)
        return [
            ScopeInfo(scope.name, scope.description, chunks, sources)
            for scope, chunks, sources in rows
        ]

    async def delete_scope(self, name: str) -> bool:
        """Delete a shared scope (a room's own goes with its attachments or its room)."""
        if is_room_scope(name):
            return False
        async with self._database.session() as session:
            return await self.drop_scope(session, name=name)

    async def drop_scope(self, session: AsyncSession, *, name: str) -> bool:
        """Delete a scope, its chunks and their vectors in `session`."""
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
        room_id: str | None = None,
    ) -> list[DocHit]:
        """The chunks most similar to `query` within the scopes, under the hard caps:
        at most max_scopes scopes, max_chunks_per_scope per scope, max_chunks in all. A room's
        own scope is searched only for that room (`room_id`); any other room scope is dropped."""
        own = room_scope(room_id) if room_id is not None else None
        allowed = [name for name in scopes if not is_room_scope(name) or name == own]
        chosen = list(dict.fromkeys(allowed))[: self.limits.max_scopes]
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


def _source_name(source: str) -> str:
    source = source.strip()[:300]
    if not source:
        raise ValueError("a document needs a source name")
    return source
