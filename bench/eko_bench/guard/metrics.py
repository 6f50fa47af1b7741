"""Answer quality, step 2: replay the serving rule over the candidates and count.

For a set of asked questions (identical-text pairs and questions whose text is stored as is
excluded, and counted apart: the exact key serves them whatever the threshold):

- served rate: questions served any answer / questions;
- precision: served their own text_a with label 1 / served;
- recall: label-1 questions served their own text_a / label-1 questions;
- raw false-hit rate: label-0 questions served any answer / label-0 questions (public labels:
  many "different" pairs are the same question, see docs/guard.md);
- served not-duplicate: served questions the data labels not a duplicate of their pair (label
  0): the wrong-serve count any labelled file gives, with its label noise (docs/guard.md);
- served another question: served questions answered by a stored question other than their
  pair's own text_a (the data says nothing about that pair: read them, see `wrong`);
- known-wrong rate (one column among others, it only recognises its own list): served
  (question, stored question) pairs that are in the hand-checked list
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
from eko.guard.language import serves_language
from eko.guard.normalize import normalize_question
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
    # An entry only answers questions in its own language (the lookup's gate, language.py);
    # False for the baselines that predate it.
    same_language: bool = True

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
    decision = decide(asked.question, _candidates(asked, config), threshold=threshold, check=check)
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
    for candidate in sorted(_candidates(asked, config), key=lambda c: -c.score):
        if candidate.score >= threshold or candidate.score < floor:
            continue
        if (
            config.rules is None
            or false_hit_check(asked.question, candidate.item, rules=config.rules).passed
        ):
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class Wrong:
    """A served pair the data does not vouch for: labelled not-duplicate, or answered by a
    stored question other than the pair's own (what `--wrong-out` writes for reading)."""

    asked: Asked
    served: str  # the stored question that answered
    score: float  # its cosine (1.0 for the exact key)
    not_duplicate: bool
    other_stored: bool
    known_wrong: bool


def _candidates(asked: Asked, config: Config) -> list[Candidate[str]]:
    if not config.same_language:
        return asked.candidates
    return [c for c in asked.candidates if serves_language(asked.language, c.question)]


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
    not_duplicate: int = 0  # served, labelled not-duplicate by the data
    other_stored: int = 0  # served another stored question than the pair's own
    wrong: list[Wrong] = field(default_factory=list)  # either of the two, for reading

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
    def not_duplicate_rate(self) -> float:
        """Served not-duplicate / served."""
        return self.not_duplicate / self.served if self.served else 0.0

    @property
    def other_stored_rate(self) -> float:
        """Served another stored question / served."""
        return self.other_stored / self.served if self.served else 0.0

    @property
    def known_wrong_rate(self) -> float:
        return self.known_wrong / self.served if self.served else 0.0


def measured(asked: Sequence[Asked]) -> list[Asked]:
    """The questions that measure anything: not identical to their pair, not stored as is,
    not refused by the guard (those are counted apart)."""
    return [a for a in asked if not a.pair.identical and a.exact is None and a.refused is None]


def figures(
    asked: Iterable[Asked],
    config: Config,
    *,
    known_wrong: frozenset[tuple[str, str]],
    clean_labels: bool = False,
    serve: Callable[[Asked], str | None] | None = None,
) -> Figures:
    """`serve`: what answered each question, for a peer measured outside the replay (the
    GPTCache rows, peer_gptcache.py); None replays `config`."""
    out = Figures(config.label)
    for item in asked:
        out.asked += 1
        out.positives += item.pair.label == 1
        out.negatives += item.pair.label == 0
        answer = served(item, config) if serve is None else serve(item)
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
        not_duplicate = item.pair.label == 0
        other = normalize_question(answer) != normalize_question(item.pair.text_a)
        out.not_duplicate += not_duplicate
        out.other_stored += other
        if not_duplicate or other:
            out.wrong.append(Wrong(item, answer, _score(item, answer), not_duplicate, other, wrong))
    return out


def _score(asked: Asked, served: str) -> float:
    if asked.exact is not None and served == asked.exact:
        return 1.0
    return max((c.score for c in asked.candidates if c.item == served), default=float("nan"))


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
