"""Shared by the vector index tests: random unit vectors, every backend the database can run,
and a bulk fill."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.vectors import VectorIndex, VectorItem
from eko.store.vectors.pg import PgVectorIndex
from eko.store.vectors.sqlite import NumpyIndex, SqliteVecIndex

DIM = 32


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def indexes(database: Database) -> list[VectorIndex]:
    """Every backend that can run on this database."""
    if database.dialect == "postgresql":
        return [PgVectorIndex(ef_search=100)]
    found: list[VectorIndex] = [NumpyIndex()]
    if database.sqlite_vec_available:
        found.insert(0, SqliteVecIndex())
    return found


async def fill(
    database: Database,
    index: VectorIndex,
    vectors: np.ndarray,
    *,
    keys: Sequence[str],
    collection: str = "docs",
    model: str = "m",
) -> None:
    items = [VectorItem(f"i{i}", keys[i % len(keys)], f"text {i}") for i in range(len(vectors))]
    async with database.session() as session:
        await index.upsert_many(
            session, collection=collection, model=model, items=items, vectors=vectors
        )


async def put(
    index: VectorIndex,
    session: AsyncSession,
    *,
    collection: str,
    item_id: str,
    vector: np.ndarray,
    key: str = "k",
    text: str = "t",
    model: str = "m",
) -> Any:
    """One upsert, with the key, text and model most tests do not care about."""
    return await index.upsert(
        session,
        collection=collection,
        item_id=item_id,
        key=key,
        text=text,
        vector=vector,
        model=model,
    )
