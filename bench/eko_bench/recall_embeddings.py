"""Vectors for `eko bench recall`: the configured embedder with a cache by text, primed from a
file of passage vectors on disk (reruns skip the minute of embedding 1,451 LoCoMo turns)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from eko.embed import Embedder, Kind
from eko.memory.multihop import decompose


class CachedEmbedder:
    """The configured embedder, remembering vectors by (kind, text): a cycled corpus repeats
    its texts, and the same questions are asked on every backend and size."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.calibrated_threshold = inner.calibrated_threshold
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    def prime(self, texts: Sequence[str], vectors: np.ndarray, *, kind: Kind) -> None:
        self._cache.update(((kind, t), v) for t, v in zip(texts, vectors, strict=True))

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._cache))
        if missing:
            self.prime(missing, await self._inner.embed(missing, kind=kind), kind=kind)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[(kind, t)] for t in texts])


async def embed_passages(embedder: CachedEmbedder, texts: list[str], directory: Path) -> str:
    """Fill the embedder's cache with the texts' passage vectors, read from (or written to) a
    file in `directory` named by the hash of the model and the texts: reruns skip the minute
    of embedding. Says where the vectors came from."""
    digest = hashlib.sha256("\x1f".join([embedder.name, *texts]).encode()).hexdigest()[:16]
    path = directory / f"{digest}.npy"
    stored = _read_vectors(path)
    if stored is not None and len(stored) == len(texts):
        embedder.prime(texts, stored, kind="passage")
        return f"read from {path}"
    _write_vectors(path, await embedder.embed(texts, kind="passage"))
    return f"cached in {path}"


def _read_vectors(path: Path) -> np.ndarray | None:
    return np.load(path) if path.is_file() else None


def _write_vectors(path: Path, vectors: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)


async def embed_queries(embedder: CachedEmbedder, questions: Sequence[str]) -> list[float]:
    """Embed each question and its sub-queries once (into the cache, in one call as the context
    builder does), timing each: the cost `measure` excludes."""
    times = []
    for question in questions:
        started = time.perf_counter()
        await embedder.embed([question, *decompose(question).sub_queries], kind="query")
        times.append((time.perf_counter() - started) * 1000)
    return times
