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
    hits = [
        VectorHit(item_id=item_id, score=1.0 - float(distance), key=key, embedding_id=int(row_id))
        for row_id, item_id, key, distance in rows
    ]
    hits.sort(key=lambda hit: (-hit.score, hit.embedding_id))
    if min_score is not None:
        hits = [hit for hit in hits if hit.score >= min_score]
    return hits


def ranked_hits(
    found: list[tuple[float, int, str, str]], k: int, min_score: float | None
) -> list[VectorHit]:
    """(cosine, embedding id, item id, key) rows, gathered from several partitions → the best
    k hits, best first (ties by embedding id, as the databases order them), above min_score."""
    found.sort(key=lambda row: (-row[0], row[1]))
    hits = [VectorHit(item_id=i, score=s, key=key, embedding_id=e) for s, e, i, key in found]
    if min_score is not None:
        hits = [hit for hit in hits if hit.score >= min_score]
    return hits[:k]
