"""MemoEmbedder: a text is embedded once, concurrent askers share one computation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from eko.embed.base import EmbeddingError, Kind
from eko.embed.hashing import HashEmbedder
from eko.embed.memo import MemoEmbedder


class CountingEmbedder(HashEmbedder):
    def __init__(self, *, fail: bool = False) -> None:
        super().__init__()
        self.seen: list[tuple[Kind, str]] = []
        self.fail = fail

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        self.seen += [(kind, t) for t in texts]
        await asyncio.sleep(0.01)
        if self.fail:
            raise EmbeddingError("down")
        return await super().embed(texts, kind=kind)


async def test_the_same_text_is_embedded_once_and_gives_the_same_vector() -> None:
    inner = CountingEmbedder()
    memo = MemoEmbedder(inner)
    first = await memo.embed(["bonjour", "salut"])
    again = await memo.embed(["salut", "bonjour", "nouveau"])
    assert inner.seen == [("query", "bonjour"), ("query", "salut"), ("query", "nouveau")]
    np.testing.assert_array_equal(again[1], first[0])
    np.testing.assert_array_equal(again[0], first[1])
    assert again.shape == (3, inner.dim) and again.dtype == np.float32
    await memo.embed(["bonjour"], kind="passage")  # another kind is another vector
    assert inner.seen[-1] == ("passage", "bonjour")


async def test_concurrent_askers_share_one_computation() -> None:
    inner = CountingEmbedder()
    memo = MemoEmbedder(inner)
    results = await asyncio.gather(*(memo.embed(["même texte"]) for _ in range(10)))
    assert inner.seen == [("query", "même texte")]
    assert all(np.array_equal(r, results[0]) for r in results)


async def test_failures_reach_every_asker_and_are_not_remembered() -> None:
    inner = CountingEmbedder(fail=True)
    memo = MemoEmbedder(inner)
    outcomes = await asyncio.gather(*(memo.embed(["x"]) for _ in range(3)), return_exceptions=True)
    assert all(isinstance(o, EmbeddingError) for o in outcomes)
    inner.fail = False
    assert (await memo.embed(["x"])).shape == (1, inner.dim)
    assert len(inner.seen) == 2


async def test_the_memo_is_bounded() -> None:
    inner = CountingEmbedder()
    memo = MemoEmbedder(inner, max_items=2)
    await memo.embed(["a", "b", "c"])
    await memo.embed(["a"])  # evicted: computed again
    assert inner.seen.count(("query", "a")) == 2
    returned = await memo.embed(["a"])
    returned[0][:] = 0.0  # a caller scribbling on its result does not touch the memo
    assert np.linalg.norm((await memo.embed(["a"]))[0]) == pytest.approx(1.0, abs=1e-5)
