"""The judge measured: grey-band candidates of the test split sent to the configured model.

A deterministic sample (the first N by a hash of the question) of the test split's questions
whose best servable candidate sits in the grey band [floor, threshold) of the judge mode and
passes the rules. Each goes to GuardJudge exactly as a lookup would send it; the verdicts are
then replayed as the judge mode (metrics.Config.verdicts) on those questions.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from eko.guard.judge import GuardJudge
from eko_bench.guard.metrics import Config, grey_candidate
from eko_bench.guard.pairs import pair_key
from eko_bench.guard.quality import Asked


@dataclass
class JudgeRun:
    model: str
    asked: int = 0
    errors: int = 0
    durations_ms: list[float] = field(default_factory=list)
    verdicts: dict[tuple[str, str], bool] = field(default_factory=dict)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    sample: list[Asked] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.durations_ms) if self.durations_ms else 0.0


def grey_sample(asked: Sequence[Asked], config: Config, limit: int) -> list[Asked]:
    """Test-split questions with a grey-band candidate, in a stable pseudo-random order."""
    grey = [a for a in asked if a.pair.split == "test" and grey_candidate(a, config) is not None]
    grey.sort(key=lambda a: hashlib.sha256(a.question.encode()).hexdigest())
    return grey[:limit]


async def run_judge(
    judge: GuardJudge,
    model: str,
    asked: Sequence[Asked],
    config: Config,
    *,
    known_wrong: frozenset[tuple[str, str]],
    limit: int,
) -> JudgeRun:
    run = JudgeRun(model)
    run.sample = grey_sample(asked, config, limit)
    for item in run.sample:
        candidate = grey_candidate(item, config)
        assert candidate is not None
        verdict = await judge.same(item.question, candidate.item)
        run.asked += 1
        run.durations_ms.append(verdict.duration_ms)
        if item.right(candidate.item):
            kind = "same question (label 1, its own text_a)"
        elif pair_key(item.question, candidate.item) in known_wrong:
            kind = "known-wrong (hand-checked different)"
        else:
            kind = "other (label 0 unchecked, or another stored question)"
        counts = run.by_kind.setdefault(kind, Counter(n=0, same=0, different=0, failed=0))
        counts["n"] += 1
        if verdict.same is None:
            run.errors += 1
            counts["failed"] += 1
        else:
            counts["same" if verdict.same else "different"] += 1
            run.verdicts[(item.question, candidate.item)] = verdict.same
    return run
