"""What a lookup found: the hit and its metadata on the reply, the lookup's result (and why
nothing was served), and the exact key a caller read ahead in its own transaction. Shapes
shared by the lookup (lookup.py), the service and the chat's guard stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eko.guard.check import CheckResult
from eko.guard.decide import Decision, Judged
from eko.guard.judge import JudgeVerdict
from eko.guard.scope import Scope
from eko.store.guard_models import GuardEntry


@dataclass(frozen=True, slots=True)
class Hit:
    entry: GuardEntry
    score: float
    match: str  # "exact" | "semantic" | "judged" (a grey-band candidate the judge accepted)
    check: CheckResult | None
    judge: JudgeVerdict | None = None

    def as_meta(self, threshold: float, policy: dict[str, Any] | None = None) -> dict[str, Any]:
        """What a cached_response message records about where its answer came from."""
        meta = {
            "entry_id": self.entry.id,
            "score": round(self.score, 4),
            "match": self.match,
            "threshold": threshold,
            "scope": Scope.parse(self.entry.scope).kind,
            "check": None if self.check is None else self.check.as_meta(),
        }
        if policy is not None:
            meta.update(mode=policy["mode"], language=policy["language"])
        if self.judge is not None:
            meta["judge"] = self.judge.as_meta()
        return meta


@dataclass(frozen=True, slots=True)
class Lookup:
    hit: Hit | None
    threshold: float
    decision: Decision[GuardEntry] | None  # None when the exact key answered
    # Why nothing was even looked for: "deictic" (the question points at something unseen).
    refused: str | None = None
    language: str = "und"
    mode: str = "balanced"
    # The judge's verdict when one was asked (served or not: a failure is recorded here).
    judge: JudgeVerdict | None = None

    def policy_meta(self) -> dict[str, Any]:
        return {"mode": self.mode, "language": self.language}

    def miss_meta(self) -> dict[str, Any] | None:
        """Why nothing was served although an entry was close enough, for the reply the
        writer makes instead: the best candidate at or above the threshold that a rule refused
        ("language": an entry in another language), or the judge's no. None when there was no
        such candidate (the common miss: nothing near enough) or when an answer was served."""
        if self.hit is not None or self.decision is None:
            return None
        refused = self.decision.rejected_by_check
        if refused:
            best = refused[0]
            assert best.check is not None
            reason = ",".join(best.check.failed)
            nearest: dict[str, Any] = judged_meta(best)
        elif self.judge is not None:
            reason, nearest = "judge", {"judge": self.judge.as_meta()}
        else:
            return None
        return {
            "served": False,
            "reason": reason,
            "threshold": self.threshold,
            **self.policy_meta(),
            "nearest": nearest,
        }


@dataclass(frozen=True, slots=True)
class ExactKey:
    """A question's exact key as the caller read it in its own transaction (`exact_key`): the
    live entry stored under it, or None (`lookup` then goes straight to the embedder)."""

    entry_id: str | None
    entry: GuardEntry | None = None  # the row itself, read in the same transaction

    @property
    def answers(self) -> bool:
        """An exact hit is waiting: the caller need not read what a writer would."""
        return self.entry is not None


def judged_meta(judged: Judged[GuardEntry]) -> dict[str, Any]:
    """One candidate of a lookup, for staff search results."""
    return {
        "entry_id": judged.candidate.item.id,
        "score": round(judged.candidate.score, 4),
        "above_threshold": judged.above_threshold,
        "check": None if judged.check is None else judged.check.as_meta(),
        "servable": judged.servable,
    }
