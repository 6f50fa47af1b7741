"""The vector index's interface and types, shared by every backend (see eko.store.vectors).

All vectors live in the `embeddings` table, one row per (collection, item_id); a backend keeps
its own index in step with that table:

- SqliteVecIndex (vectors.sqlite): a sqlite-vec `vec0` table per dimension in the SQLite file;
- NumpyIndex (vectors.sqlite): exact search over the stored blobs, when sqlite-vec cannot load;
- PgVectorIndex (vectors.pg): a pgvector HNSW index per dimension on PostgreSQL;
- MemoryVectorIndex (vectors.memory): chosen collections held in memory in front of another.

Imports point one way: backends -> base -> rows, hits; build.py (the factory) imports the
backends.

Rules every backend keeps: a search compares only rows of the query's model and dimension
(vector spaces never mix), and only rows whose visibility `key` is one of the given keys.
Scores are cosine similarities (1 = same direction). `collection` names a feature ("guard",
"docs", ...) and should stay a small fixed set: per-user or per-room scoping goes in `key`.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol, TypeAlias

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Embedding
from eko.store.vectors.hits import VectorHit, hits_from_rows
from eko.store.vectors.rows import WRITE_CHUNK, chunks, write_rows

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
    "chunks",
    "hits_from_rows",
    "query_vector",
    "unit_rows",
]

# Same as eko.embed.Kind: store sits below embed and must not import it.
Kind: TypeAlias = Literal["query", "passage"]
SessionFactory: TypeAlias = Callable[[], AbstractAsyncContextManager[AsyncSession]]


@dataclass(frozen=True, slots=True)
class VectorItem:
    """One row for upsert_many: the vector comes separately, as a row of a matrix."""

    item_id: str
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class VectorQuery:
    """One search as VectorIndex.search hands it to a backend: already checked.

    `vector` is a unit float32 vector, `keys` distinct and never empty, `k` at least 1.
    """

    collection: str
    model: str
    keys: tuple[str, ...]
    vector: np.ndarray
    k: int
    min_score: float | None = None

    @property
    def dim(self) -> int:
        return len(self.vector)


@dataclass(frozen=True, slots=True)
class ReembedProgress:
    done: int
    total: int


class TextEmbedder(Protocol):
    """What reembed needs from an embedder. eko.embed.Embedder fits; store must not import it."""

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray: ...


def _passage(_collection: str) -> Kind:
    return "passage"


class VectorIndex(abc.ABC):
    """The `embeddings` table plus one backend's nearest-neighbour index over it."""

    backend: ClassVar[str]
    # True when search returns the exact nearest neighbours (no approximate index).
    exact: ClassVar[bool]

    async def upsert(
        self,
        session: AsyncSession,
        *,
        collection: str,
        item_id: str,
        key: str,
        text: str,
        vector: np.ndarray,
        model: str,
    ) -> int:
        """Insert or replace the row of (collection, item_id); returns its embedding id."""
        ids = await self.upsert_many(
            session,
            collection=collection,
            model=model,
            items=[VectorItem(item_id=item_id, key=key, text=text)],
            vectors=np.asarray(vector).reshape(1, -1),
        )
        return ids[0]

    async def upsert_many(
        self,
        session: AsyncSession,
        *,
        collection: str,
        model: str,
        items: Sequence[VectorItem],
        vectors: np.ndarray,
    ) -> list[int]:
        """upsert for a batch (vectors[i] belongs to items[i]); ids come back in item order.

        An item_id given twice keeps its last row, as two upserts in a row would.
        """
        if not items and np.size(vectors) == 0:
            return []
        matrix = unit_rows(vectors)
        if matrix.shape[0] != len(items):
            raise ValueError(f"{len(items)} items but {matrix.shape[0]} vectors")
        last_of = {item.item_id: i for i, item in enumerate(items)}
        unique = sorted(last_of.values())
        dim = matrix.shape[1]
        await self._prepare_write(session, dim)
        id_of: dict[str, int] = {}
        for chunk in chunks(unique, WRITE_CHUNK):
            chunk_items = [items[i] for i in chunk]
            item_ids = [item.item_id for item in chunk_items]
            await self._unindex(session, collection, item_ids)
            rows = [
                {
                    "collection": collection,
                    "item_id": item.item_id,
                    "key": item.key,
                    "model": model,
                    "dim": dim,
                    "text": item.text,
                    "vector": matrix[i],
                }
                for item, i in zip(chunk_items, chunk, strict=True)
            ]
            ids = await write_rows(session, collection, rows)
            chunk_vectors = matrix[chunk]
            await self._index(session, ids, collection, model, chunk_items, chunk_vectors)
            id_of.update(zip(item_ids, ids, strict=True))
        await self._finish_write(session, dim)
        return [id_of[item.item_id] for item in items]

    async def search(
        self,
        session: AsyncSession,
        *,
        collection: str,
        model: str,
        keys: Sequence[str],
        query: np.ndarray,
        k: int,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        """The k rows most similar to `query` among (collection, model, dim, key in keys).

        A zero, non-finite or multi-row `query` raises ValueError even when nothing could match.
        """
        vector = query_vector(query)
        if not keys or k <= 0:
            return []
        distinct = tuple(dict.fromkeys(keys))
        return await self.search_query(
            session, VectorQuery(collection, model, distinct, vector, k, min_score)
        )

    async def search_each(
        self,
        session: AsyncSession,
        *,
        collection: str,
        model: str,
        keys: Sequence[str],
        queries: Sequence[np.ndarray],
        k: int,
    ) -> list[list[VectorHit]]:
        """search for each of `queries` in the same rows (the in-memory backend finds and
        loads the partitions once for all of them)."""
        vectors = [query_vector(query) for query in queries]
        if not keys or k <= 0 or not vectors:
            return [[] for _ in vectors]
        distinct = tuple(dict.fromkeys(keys))
        return await self.search_queries(
            session, [VectorQuery(collection, model, distinct, vector, k) for vector in vectors]
        )

    @abc.abstractmethod
    async def search_query(self, session: AsyncSession, query: VectorQuery) -> list[VectorHit]:
        """search, for a query it has checked: each backend's own search."""

    async def search_queries(
        self, session: AsyncSession, queries: Sequence[VectorQuery]
    ) -> list[list[VectorHit]]:
        """search_each, for queries it has checked (one collection, model and keys)."""
        return [await self.search_query(session, query) for query in queries]

    async def delete(
        self, session: AsyncSession, *, collection: str, item_ids: Sequence[str]
    ) -> int:
        """Delete the rows of these items (unknown ids are ignored); returns how many went."""
        deleted = 0
        for chunk in chunks(list(dict.fromkeys(item_ids)), WRITE_CHUNK):
            await self._unindex(session, collection, chunk)
            result = await session.execute(
                delete(Embedding).where(
                    Embedding.collection == collection, Embedding.item_id.in_(chunk)
                )
            )
            deleted += int(getattr(result, "rowcount", 0) or 0)
        return deleted

    async def count_other_models(self, session: AsyncSession, *, model: str) -> dict[str, int]:
        """Rows embedded by any model but `model`, per model: what `eko db reembed` would redo."""
        result = await session.execute(
            select(Embedding.model, func.count())
            .where(Embedding.model != model)
            .group_by(Embedding.model)
        )
        return {name: int(count) for name, count in result.all()}

    async def reembed(
        self,
        sessions: SessionFactory,
        *,
        embedder: TextEmbedder,
        kind_of: Callable[[str], Kind] = _passage,
        batch_size: int = 64,
    ) -> AsyncIterator[ReembedProgress]:
        """Re-embed, from their stored text, every row of another model; yields progress.

        Each batch is read, embedded outside any transaction (no lock held while the model
        runs), then written in its own short transaction, so an interrupted run resumes where
        it stopped. `kind_of(collection)` says whether a collection holds queries or passages.
        A row rewritten meanwhile (new text or already this model) is left alone.
        """
        target = embedder.name
        async with sessions() as session:
            total = sum((await self.count_other_models(session, model=target)).values())
        done, after_id = 0, 0
        while True:
            async with sessions() as session:
                result = await session.execute(
                    select(Embedding.id, Embedding.collection, Embedding.text)
                    .where(Embedding.model != target, Embedding.id > after_id)
                    .order_by(Embedding.id)
                    .limit(batch_size)
                )
                batch = list(result.all())
            if not batch:
                break
            after_id = batch[-1][0]
            embedded: dict[int, np.ndarray] = {}
            for kind in ("query", "passage"):
                rows = [row for row in batch if kind_of(row[1]) == kind]
                if rows:
                    vectors = await embedder.embed([row[2] for row in rows], kind=kind)
                    embedded.update(zip((row[0] for row in rows), vectors, strict=True))
            texts = {row[0]: row[2] for row in batch}
            async with sessions() as session:
                await self._rewrite(session, embedded, texts, target)
            done += len(batch)
            yield ReembedProgress(done=done, total=max(total, done))

    async def _rewrite(
        self,
        session: AsyncSession,
        embedded: Mapping[int, np.ndarray],
        texts: Mapping[int, str],
        model: str,
    ) -> None:
        # Re-read under this transaction: rows changed since they were read are skipped.
        result = await session.execute(
            select(
                Embedding.id, Embedding.collection, Embedding.item_id, Embedding.key, Embedding.text
            ).where(Embedding.id.in_(list(embedded)), Embedding.model != model)
        )
        by_collection: dict[str, list[tuple[int, str, str]]] = {}
        for row_id, collection, item_id, key, text in result.all():
            if text == texts[row_id]:
                by_collection.setdefault(collection, []).append((row_id, item_id, key))
        for collection, rows in by_collection.items():
            await self.upsert_many(
                session,
                collection=collection,
                model=model,
                items=[VectorItem(item_id, key, texts[row_id]) for row_id, item_id, key in rows],
                vectors=np.stack([embedded[row_id] for row_id, _, _ in rows]),
            )

    async def aclose(self) -> None:  # noqa: B027
        """Stop background work (a database backend has none)."""

    # --- backend hooks around every write: optional, so empty here ---

    async def _prepare_write(  # noqa: B027
        self, session: AsyncSession, dim: int
    ) -> None:
        """Make sure the index structure for `dim` exists."""

    async def _finish_write(  # noqa: B027
        self, session: AsyncSession, dim: int
    ) -> None:
        """After rows of `dim` were written (an index built over existing rows builds faster)."""

    async def _unindex(  # noqa: B027
        self, session: AsyncSession, collection: str, item_ids: list[str]
    ) -> None:
        """Forget these items' current rows in the side index (before replace or delete)."""

    async def _index(  # noqa: B027
        self,
        session: AsyncSession,
        ids: list[int],
        collection: str,
        model: str,
        items: list[VectorItem],
        vectors: np.ndarray,
    ) -> None:
        """Add freshly written rows to the side index."""


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """A 2-D float32 matrix of unit rows; zero or non-finite vectors are rejected."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError(f"expected vectors of shape (n, dim), got {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise ValueError("cannot store or search a zero or non-finite vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


def query_vector(query: np.ndarray) -> np.ndarray:
    matrix = unit_rows(query)
    if matrix.shape[0] != 1:
        raise ValueError(f"search takes one query vector, got {matrix.shape[0]}")
    return matrix[0]
