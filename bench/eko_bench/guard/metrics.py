"""Answer quality, step 2: replay the serving rule over the candidates and count.

For a set of asked questions (identical-text pairs and questions whose text is stored as is
excluded, and counted apart: the exact key serves them whatever the threshold):

- served rate: questions served any answer / questions;
- precision: served their own text_a with label 1 / served;
- recall: label-1 questions served their own text_a / label-1 questions;
- raw false-hit rate: label-0 questions served any answer / label-0 questions (public labels:
  many "different" pairs are the same question, see docs/guard.md);
- known-wrong rate: served (question, stored question) pairs that are in the hand-checked list
  of really different questions (bench/eko_bench/data/guard_known_wrong.jsonl) / served. For a set
  whose labels are clean (the French set written for this), every serve of a label-0 question
  and every serve of another stored question counts as known-wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from eko.guard.check import RULES, false_hit_check
from eko.guard.decide import Candidate, decide
from eko.guard.rules import is_deictic
from eko_bench.guard.pairs import pair_key
from eko_bench.guard.quality import Asked

Verdicts = Mapping[tuple[str, str], bool]


@dataclass(frozen=True, slots=True)
class Config:
    """A serving rule to replay: thresholds per language, the check's rules, a judge."""

    label: str
    thresholds: Mapping[str, float]  # per language; "und" for any other
    rules: tuple[str, ...] | None = RULES  # None: no check at all
    judge_floors: Mapping[str, float] = field(default_factory=dict)
    # The judge's answers, by (question, stored question); a grey candidate without one is
    # not served (as when the judge fails).
    verdicts: Verdicts | None = None

    def threshold(self, language: str) -> float:
        return self.thresholds.get(language, self.thresholds["und"])


def served(asked: Asked, config: Config) -> str | None:
    """The stored question this config serves to `asked`, if any (the service's order)."""
    if config.rules is not None and "deictic" in config.rules and is_deictic(asked.question):
        return None
    if asked.exact is not None:
        return asked.exact
    threshold = config.threshold(asked.language)
    check = None if config.rules is None else partial(false_hit_check, rules=config.rules)
    decision = decide(asked.question, asked.candidates, threshold=threshold, check=check)
    if decision.served is not None:
        return decision.served.candidate.item
    grey = grey_candidate(asked, config)
    if grey is not None and config.verdicts is not None:
        return grey.item if config.verdicts.get((asked.question, grey.item)) else None
    return None


def grey_candidate(asked: Asked, config: Config) -> Candidate[str] | None:
    """The candidate the judge would be asked about: the best one in the grey band that
    passes the check (the lookup asks about one at most)."""
    floor = config.judge_floors.get(asked.language, config.judge_floors.get("und"))
    if floor is None:
        return None
    threshold = config.threshold(asked.language)
    for candidate in sorted(asked.candidates, key=lambda c: -c.score):
        if candidate.score >= threshold or candidate.score < floor:
            continue
        if (
            config.rules is None
            or false_hit_check(asked.question, candidate.item, rules=config.rules).passed
        ):
            return candidate
    return None


@dataclass
class Figures:
    label: str
    asked: int = 0
    positives: int = 0
    negatives: int = 0
    served: int = 0
    right: int = 0
    false_hits: int = 0  # label-0 questions served anything
    known_wrong: int = 0
    wrong_examples: list[tuple[str, str]] = field(default_factory=list)

    @property
    def served_rate(self) -> float:
        return self.served / max(self.asked, 1)

    @property
    def precision(self) -> float:
        return self.right / self.served if self.served else float("nan")

    @property
    def recall(self) -> float:
        return self.right / max(self.positives, 1)

    @property
    def false_hit_rate(self) -> float:
        return self.false_hits / max(self.negatives, 1)

    @property
    def known_wrong_rate(self) -> float:
        return self.known_wrong / self.served if self.served else 0.0


def measured(asked: Sequence[Asked]) -> list[Asked]:
    """The questions that measure anything: not identical to their pair, not stored as is."""
    return [a for a in asked if not a.pair.identical and a.exact is None]


def figures(
    asked: Iterable[Asked],
    config: Config,
    *,
    known_wrong: frozenset[tuple[str, str]],
    clean_labels: bool = False,
) -> Figures:
    out = Figures(config.label)
    for item in asked:
        out.asked += 1
        out.positives += item.pair.label == 1
        out.negatives += item.pair.label == 0
        answer = served(item, config)
        if answer is None:
            continue
        out.served += 1
        right = item.right(answer)
        out.right += right
        out.false_hits += item.pair.label == 0
        wrong = not right if clean_labels else pair_key(item.question, answer) in known_wrong
        if wrong:
            out.known_wrong += 1
            out.wrong_examples.append((item.question, answer))
    return out


def lowest_threshold(
    grid: Sequence[float],
    evaluate: Callable[[float], Figures],
    *,
    max_known_wrong_rate: float,
) -> float:
    """The lowest threshold of the grid whose known-wrong rate, and that of every higher one,
    stays within the bound (so the choice is not a lucky dip)."""
    chosen = max(grid)
    for threshold in sorted(grid, reverse=True):
        if evaluate(threshold).known_wrong_rate > max_known_wrong_rate:
            break
        chosen = threshold
    return chosen
