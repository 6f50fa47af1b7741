"""The baselines scored in the same run as Eko's context, at the same character budget:

- random: past turns drawn at random (fixed seed per question), in conversation order;
- BM25: past turns ranked by Okapi BM25 (k1 = 1.5, b = 0.75) against the question.

Both render each turn as "(date) Speaker: text" and stop before the budget is exceeded.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from eko.text import fold_plain
from eko_bench.context.content import content_tokens

K1 = 1.5
B = 0.75
SEED = 20261123


@dataclass(frozen=True, slots=True)
class PastTurn:
    index: int
    line: str  # "(date) Speaker: text"


class BM25:
    """Okapi BM25 over a fixed list of documents (a conversation's turns)."""

    def __init__(self, documents: Sequence[str]) -> None:
        self._docs = [Counter(_terms(d)) for d in documents]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._average = sum(self._lengths) / max(len(self._docs), 1)
        frequency: Counter[str] = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        total = len(self._docs)
        self._idf = {
            term: math.log(1 + (total - df + 0.5) / (df + 0.5)) for term, df in frequency.items()
        }

    def scores(self, query: str) -> list[float]:
        terms = _terms(query)
        result = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            score = 0.0
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    norm = tf + K1 * (1 - B + B * length / (self._average or 1))
                    score += self._idf[term] * tf * (K1 + 1) / norm
            result.append(score)
        return result


def _terms(text: str) -> list[str]:
    allowed = content_tokens(fold_plain(text))
    return [t for t in fold_plain(text).split() if t in allowed]


def fill(turns: Sequence[PastTurn], order: Sequence[int], budget: int) -> str:
    """Turns taken in `order` while they fit the budget, shown in conversation order."""
    chosen: list[PastTurn] = []
    used = 0
    for position in order:
        turn = turns[position]
        cost = len(turn.line) + (1 if chosen else 0)
        if used + cost > budget:
            continue  # a shorter turn further down may still fit
        chosen.append(turn)
        used += cost
    return "\n".join(t.line for t in sorted(chosen, key=lambda t: t.index))


def random_context(turns: Sequence[PastTurn], budget: int, question_number: int) -> str:
    order = list(range(len(turns)))
    random.Random(SEED + question_number).shuffle(order)
    return fill(turns, order, budget)


def bm25_context(turns: Sequence[PastTurn], index: BM25, question: str, budget: int) -> str:
    scores = index.scores(question)
    order = sorted(range(len(turns)), key=lambda i: (-scores[i], i))
    return fill(turns, order, budget)
