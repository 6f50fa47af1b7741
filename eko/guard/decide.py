"""The serving decision, as a pure function: which candidate (if any) answers a question.

The service calls it with the entries its vector search found; the benchmark calls it with the
same kind of candidates to sweep thresholds, so the numbers measure the real rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from eko.guard.check import CheckResult, false_hit_check

T = TypeVar("T")
# Two cosines this close are a tie (float noise across backends): the most recent entry wins.
TIE_EPSILON = 1e-6
# Spec: a hit at or above this similarity counts twice in usage_count.
STRONG_HIT = 0.95


@dataclass(frozen=True, slots=True)
class Candidate(Generic[T]):
    """One stored entry found for a question, with its similarity."""

    item: T
    question: str
    score: float
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Judged(Generic[T]):
    candidate: Candidate[T]
    above_threshold: bool
    check: CheckResult | None  # None when the check was off or the score too low to matter

    @property
    def servable(self) -> bool:
        return self.above_threshold and (self.check is None or self.check.passed)


@dataclass(frozen=True, slots=True)
class Decision(Generic[T]):
    served: Judged[T] | None
    # Every candidate, best first, with why it was or was not served (staff search shows them).
    judged: list[Judged[T]] = field(default_factory=list)

    @property
    def rejected_by_check(self) -> list[Judged[T]]:
        return [j for j in self.judged if j.above_threshold and j.check and not j.check.passed]


CheckFn = Callable[[str, str], CheckResult]


def decide(
    question: str,
    candidates: Sequence[Candidate[T]],
    *,
    threshold: float,
    check: CheckFn | None = false_hit_check,
) -> Decision[T]:
    """Serve the best candidate at or above `threshold` that passes the false-hit check.

    Best = highest cosine; ties go to the most recent entry (spec). A candidate that fails the
    check does not block the next one: a true paraphrase may sit just below a false hit.
    """
    ordered = sorted(candidates, key=lambda c: (-round(c.score / TIE_EPSILON), _newest(c)))
    judged: list[Judged[T]] = []
    served: Judged[T] | None = None
    for candidate in ordered:
        above = candidate.score >= threshold
        result = check(question, candidate.question) if (above and check is not None) else None
        verdict = Judged(candidate, above, result)
        judged.append(verdict)
        if served is None and verdict.servable:
            served = verdict
    return Decision(served, judged)


def usage_increment(score: float) -> int:
    """Spec: +2 when the similarity is ≥ 0.95, else +1."""
    return 2 if score >= STRONG_HIT else 1


def _newest(candidate: Candidate[Any]) -> float:
    return -candidate.created_at.timestamp()
