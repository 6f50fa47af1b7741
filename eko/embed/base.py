"""The Embedder contract every feature codes against, and the helpers its implementations share."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import numpy as np

# e5-style models embed a search query and a stored passage differently ("query: " / "passage: ").
# Question-to-question matching (the memory guard) uses "query" on both sides.
Kind: TypeAlias = Literal["query", "passage"]


class EmbeddingError(Exception):
    """An embedder could not produce vectors (endpoint down, bad answer, engine failure)."""


@runtime_checkable
class Embedder(Protocol):
    # Read-only properties, so plain attributes and computed ones both satisfy the protocol.
    @property
    def name(self) -> str:
        """Stored with every vector: two vectors are only ever compared when names match."""
        ...

    @property
    def dim(self) -> int: ...

    @property
    def calibrated_threshold(self) -> float:
        """Cosine at which two questions count as "the same" (memory guard default)."""
        ...

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows; (0, dim) for no texts."""
        ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """float32 copy with unit-norm rows; a zero or non-finite row is an error, not a silent NaN."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise EmbeddingError(f"expected a 2-D array of vectors, got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise EmbeddingError("embedder returned a zero or non-finite vector")
    return np.ascontiguousarray(array / norms, dtype=np.float32)


def batches(texts: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(texts), max(1, size)):
        yield texts[start : start + size]


def empty(dim: int) -> np.ndarray:
    return np.zeros((0, dim), dtype=np.float32)
