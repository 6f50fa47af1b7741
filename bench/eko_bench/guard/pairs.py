"""Question pairs for the guard benchmark: QQP-format files, the held-out split, the hand-checked
list of known-wrong pairs, and an on-disk cache of their embeddings.

The split is deterministic and never tuned on: a pair goes to `test` when the SHA-256 of its
two normalized texts falls in the first 30% (about 30% of pairs). Every operating point is
chosen on `dev`; `test` only reports.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from eko.embed import Embedder
from eko.embed.base import Kind
from eko.guard.normalize import normalize_question
from eko_bench.data_errors import BenchDataError, json_lines

Split = Literal["dev", "test"]
TEST_SHARE = 30  # percent
BUNDLED_DATA = Path(__file__).resolve().parent.parent / "data"
FR_PAIRS = BUNDLED_DATA / "guard_fr_pairs.jsonl"
KNOWN_WRONG = BUNDLED_DATA / "guard_known_wrong.jsonl"


@dataclass(frozen=True, slots=True)
class Pair:
    text_a: str  # stored (learned) question
    text_b: str  # asked question
    label: int  # 1 = same question (by the data set's labels)
    lang: str | None  # the file's `lang` field, when it has one
    split: Split

    @property
    def identical(self) -> bool:
        return normalize_question(self.text_a) == normalize_question(self.text_b)


def split_of(text_a: str, text_b: str) -> Split:
    key = f"{normalize_question(text_a)}\n{normalize_question(text_b)}".encode()
    return "test" if int(hashlib.sha256(key).hexdigest()[:8], 16) % 100 < TEST_SHARE else "dev"


def load_pairs(path: Path, limit: int | None = None) -> list[Pair]:
    """{text_a, text_b, label[, lang]} per line, .jsonl or .jsonl.gz."""
    pairs: list[Pair] = []
    for number, row in json_lines(path):
        if limit and len(pairs) >= limit:
            break
        try:
            text_a, text_b, label = str(row["text_a"]), str(row["text_b"]), int(row["label"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchDataError(
                f"{path}:{number}: expected {{text_a, text_b, label[, lang]}} ({exc!r})"
            ) from exc
        pairs.append(Pair(text_a, text_b, label, row.get("lang"), split_of(text_a, text_b)))
    return pairs


def pair_key(question: str, stored: str) -> tuple[str, str]:
    """Order-free key of two questions (a known-wrong pair is wrong both ways)."""
    a, b = sorted((normalize_question(question), normalize_question(stored)))
    return a, b


def load_known_wrong(path: Path = KNOWN_WRONG) -> frozenset[tuple[str, str]]:
    """The hand-checked pairs that really are different questions (docs/guard.md)."""
    if not path.is_file():
        return frozenset()
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return frozenset(pair_key(row["question"], row["served"]) for row in rows)


class CachedEmbedder:
    """The configured embedder with every text embedded once, kept in a file between runs
    (`<home>/bench-cache/guard-<embedder>.npz`): a re-run does not pay the ~3 minutes again."""

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.calibrated_threshold = inner.calibrated_threshold
        self.path = path
        self.cache: dict[str, np.ndarray] = {}
        if path is not None and path.is_file():
            with np.load(path, allow_pickle=False) as stored:
                texts = json.loads(str(stored["texts"]))
                self.cache.update(zip(texts, stored["vectors"], strict=True))

    async def warm(self, texts: Iterable[str], batch: int = 64) -> int:
        """Embed what is missing; returns how many texts were embedded."""
        todo = sorted(set(texts) - self.cache.keys())
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = await self.inner.embed(chunk, kind="query")
            self.cache.update(zip(chunk, vectors, strict=True))
        if todo and self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            texts = list(self.cache)
            np.savez(
                self.path,
                texts=np.array(json.dumps(texts)),
                vectors=np.stack([self.cache[t] for t in texts]).astype(np.float32),
            )
        return len(todo)

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        missing = [t for t in texts if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, await self.inner.embed(missing, kind=kind), strict=True))
        return np.stack([self.cache[t] for t in texts])


def cache_path(home: Path, embedder: str) -> Path:
    slug = "".join(c if c.isalnum() else "-" for c in embedder)
    return home / "bench-cache" / f"guard-{slug}.npz"
