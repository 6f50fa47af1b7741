"""HashEmbedder: the deterministic stand-in that fast tests of cache and memory logic rely on."""

from __future__ import annotations

import numpy as np

from eko.embed import Embedder, HashEmbedder


async def test_shape_dtype_and_unit_norm() -> None:
    embedder = HashEmbedder(dim=64)
    vectors = await embedder.embed(["one text", "another text", ""], kind="passage")
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


async def test_empty_input_gives_an_empty_matrix() -> None:
    vectors = await HashEmbedder(dim=16).embed([])
    assert vectors.shape == (0, 16)
    assert vectors.dtype == np.float32


async def test_deterministic_across_instances_and_kinds() -> None:
    # Python's hash() is salted per process; the embedder must not depend on it.
    a = await HashEmbedder().embed(["Quel temps fait-il à Paris ?"], kind="query")
    b = await HashEmbedder().embed(["Quel temps fait-il à Paris ?"], kind="passage")
    assert np.array_equal(a, b)


async def test_shared_words_score_higher_than_unrelated_text() -> None:
    embedder = HashEmbedder()
    base, close, far = await embedder.embed(
        [
            "how do I reset my password",
            "how can I reset my password please",
            "the cat sleeps on the warm windowsill",
        ]
    )
    assert float(base @ base) == 1.0 or abs(float(base @ base) - 1.0) < 1e-6
    assert float(base @ close) > 0.7
    assert abs(float(base @ far)) < 0.3


async def test_case_and_accents_do_not_matter() -> None:
    a, b = await HashEmbedder().embed(["Été à Montréal", "ete a MONTREAL"])
    assert float(a @ b) > 0.999


def test_satisfies_the_embedder_protocol() -> None:
    embedder = HashEmbedder(dim=32)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "hash-32"  # the dimension is part of the vector space's name
    assert 0 < embedder.calibrated_threshold <= 1
