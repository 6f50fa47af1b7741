"""What a search returns: hits, best first, from a backend's rows or from several partitions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class VectorHit:
    item_id: str
    score: float  # cosine similarity, 1 = same direction
    key: str
    embedding_id: int


def hits_from_rows(
    rows: Sequence[tuple[int, str, str, float]], min_score: float | None
) -> list[VectorHit]:
    """(id, item_id, key, cosine distance) rows → hits, best first, above min_score."""
    return _best_first(
        [
            VectorHit(item_id=item_id, score=1.0 - float(distance), key=key, embedding_id=int(i))
            for i, item_id, key, distance in rows
        ],
        min_score,
    )


def ranked_hits(
    found: Sequence[tuple[float, int, str, str]], k: int, min_score: float | None
) -> list[VectorHit]:
    """(cosine, embedding id, item id, key) rows, gathered from several partitions → the best
    k hits, best first, above min_score."""
    hits = [VectorHit(item_id=i, score=s, key=key, embedding_id=e) for s, e, i, key in found]
    return _best_first(hits, min_score)[:k]


def _best_first(hits: list[VectorHit], min_score: float | None) -> list[VectorHit]:
    # Ties by embedding id, as the databases order them.
    hits.sort(key=lambda hit: (-hit.score, hit.embedding_id))
    return hits if min_score is None else [hit for hit in hits if hit.score >= min_score]
