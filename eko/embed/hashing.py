"""HashEmbedder: a deterministic, dependency-free stand-in for a real model, for fast tests.

Each text becomes a bag of hashed word uni- and bigrams (the "hashing trick") folded into `dim`
buckets with a ±1 sign, then normalized. Texts sharing words get a high cosine, unrelated ones
≈ 0, identical ones exactly 1 — enough to test cache, memory and search logic without a model.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

from eko.embed.base import Kind, empty
from eko.text import fold

_WORD = re.compile(r"\w+")
# Bigrams weigh less than words: word overlap dominates, word order only nudges.
_BIGRAM_WEIGHT = 0.5


class HashEmbedder:
    calibrated_threshold = 0.9  # a test double: only near-identical wording passes

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        # Microseconds per text: no need to leave the event loop. `kind` is ignored so that
        # tests may mix query and passage vectors freely.
        if not texts:
            return empty(self.dim)
        return np.stack([self.vector(text) for text in texts])

    def vector(self, text: str) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        words = _words(text)
        features = [(w, 1.0) for w in words]
        features += [(f"{a} {b}", _BIGRAM_WEIGHT) for a, b in itertools.pairwise(words)]
        if not features:
            features = [("\x00empty", 1.0)]  # still a unit vector, equal for all empty texts
        for feature, weight in features:
            digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest())
            out[digest % self.dim] += weight if digest >> 63 else -weight
        norm = float(np.linalg.norm(out))
        if norm == 0.0:  # every feature cancelled out: rare, and any fixed unit vector will do
            out[0], norm = 1.0, 1.0
        return out / norm


def _words(text: str) -> list[str]:
    # Case and accents do not change a word ("Été" == "ete"), as with a real multilingual model.
    return _WORD.findall(fold(text))
