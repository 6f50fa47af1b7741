"""Do two backends find the same candidates? The quality figures should not depend on the
database: the same embedder, the same in-memory index. This compares what each backend's
lookups returned, question by question."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from eko_bench.guard.quality import Asked

# Cosines closer than this are the same (float32 vectors stored and read back).
SCORE_TOLERANCE = 1e-5


@dataclass(frozen=True, slots=True)
class Agreement:
    asked: int
    different_candidates: int  # questions whose candidate questions (as a set) differ
    max_score_gap: float  # the largest cosine difference of a candidate both found
    examples: list[str]  # a few asked questions that differ
    # Questions whose last candidates differ only by a tie (float noise at the k-th place).
    ties: int = 0

    @property
    def agree(self) -> bool:
        return self.different_candidates == 0 and self.max_score_gap <= SCORE_TOLERANCE


def compare(
    first: Mapping[str, list[Asked]], second: Mapping[str, list[Asked]], *, examples: int = 3
) -> Agreement:
    """Question by question (same sets, same order): candidates and their cosines."""
    asked = different = ties = 0
    gap = 0.0
    found: list[str] = []
    for name, items in first.items():
        for a, b in zip(items, second.get(name, []), strict=True):
            asked += 1
            scores_a = {c.item: c.score for c in a.candidates}
            scores_b = {c.item: c.score for c in b.candidates}
            if a.exact == b.exact and _tie_at_the_end(scores_a, scores_b):
                ties += 1
            elif scores_a.keys() != scores_b.keys() or a.exact != b.exact:
                different += 1
                if len(found) < examples:
                    found.append(a.question)
            for item in scores_a.keys() & scores_b.keys():
                gap = max(gap, abs(scores_a[item] - scores_b[item]))
    return Agreement(asked, different, gap, found, ties)


def _tie_at_the_end(a: Mapping[str, float], b: Mapping[str, float]) -> bool:
    """Different sets whose extra members all tie with the lowest score the other side kept:
    the k-th place went one way on one backend and the other way on the other."""
    if a.keys() == b.keys() or len(a) != len(b):
        return False
    return all(
        abs(side[item] - min(other.values())) <= SCORE_TOLERANCE
        for side, other in ((a, b), (b, a))
        for item in side.keys() - other.keys()
    )


def agreement_line(backend: str, reference: str, agreement: Agreement) -> str:
    verdict = "same" if agreement.agree else "DIFFERENT"
    line = (
        f"{backend} vs {reference}: {verdict} candidates — {agreement.different_candidates} of "
        f"{agreement.asked:,} asked questions differ, largest cosine gap "
        f"{agreement.max_score_gap:.1e}; {agreement.ties} tie(s) at the last candidate"
    )
    if agreement.examples:
        line += "; e.g. " + " | ".join(agreement.examples)
    return line
