"""MemoEmbedder: the same text is embedded once, however many features ask for it.

One message is embedded by the memory guard (is it a known question?) and again by the dual
context (what do we remember about it?). On 2 cores the embedder is the largest CPU cost of a
message, so a small LRU of recent texts, plus sharing a computation already in flight, halves
it. Vectors are immutable (read-only arrays), so sharing them is safe.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from eko.embed.base import Embedder, Kind, empty

Key = tuple[Kind, str]


class MemoEmbedder:
    def __init__(self, inner: Embedder, *, max_items: int = 2048) -> None:
        self.inner = inner
        self._max_items = max_items
        self._memo: OrderedDict[Key, np.ndarray] = OrderedDict()
        self._pending: dict[Key, asyncio.Future[np.ndarray]] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def calibrated_threshold(self) -> float:
        return self.inner.calibrated_threshold

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        if not texts:
            return empty(self.dim)
        keys: list[Key] = [(kind, text) for text in texts]
        found: dict[Key, np.ndarray] = {}
        waiting: dict[Key, asyncio.Future[np.ndarray]] = {}
        for key in keys:
            if key in self._memo:
                self._memo.move_to_end(key)
                found[key] = self._memo[key]
            elif key in self._pending:
                waiting[key] = self._pending[key]
        missing = list(dict.fromkeys(k for k in keys if k not in found and k not in waiting))
        if missing:
            found.update(await self._compute(missing, kind))
        for key, future in waiting.items():
            found[key] = await asyncio.shield(future)
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    async def _compute(self, missing: list[Key], kind: Kind) -> dict[Key, np.ndarray]:
        loop = asyncio.get_running_loop()
        futures = {key: loop.create_future() for key in missing}
        self._pending.update(futures)
        try:
            vectors = await self.inner.embed([text for _, text in missing], kind=kind)
        except BaseException as exc:
            for key, future in futures.items():
                self._pending.pop(key, None)
                if isinstance(exc, asyncio.CancelledError):
                    future.cancel()
                else:
                    future.set_exception(exc)
                    future.exception()  # marked retrieved: only waiters re-raise it
            raise
        computed: dict[Key, np.ndarray] = {}
        for key, vector in zip(missing, vectors, strict=True):
            vector.setflags(write=False)
            computed[key] = vector
            self._remember(key, vector)
            self._pending.pop(key, None)
            futures[key].set_result(vector)
        return computed

    def _remember(self, key: Key, vector: np.ndarray) -> None:
        self._memo[key] = vector
        self._memo.move_to_end(key)
        while len(self._memo) > self._max_items:
            self._memo.popitem(last=False)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
