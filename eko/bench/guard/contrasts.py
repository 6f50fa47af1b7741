"""Synthetic contrasts of stored questions: negated, a number changed, a name swapped."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from eko.guard.check import names

CONTRASTS_PER_KIND = 300


_AUX = re.compile(
    r"\b(is|are|was|were|do|does|did|can|could|should|would|will|has|have)\b", re.IGNORECASE
)
_NEGATED_AUX = {
    "is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't", "do": "don't",
    "does": "doesn't", "did": "didn't", "can": "can't", "could": "couldn't",
    "should": "shouldn't", "would": "wouldn't", "will": "won't", "has": "hasn't",
    "have": "haven't",
}  # fmt: skip
_NUMBER = re.compile(r"\b\d+\b")


def make_contrasts(questions: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """(contrast, original) pairs of three kinds, deterministic, up to CONTRASTS_PER_KIND each."""
    rng = np.random.default_rng(7)
    pool = sorted({n for q in questions for n in _name_tokens(q)})
    out: dict[str, list[tuple[str, str]]] = {"negation": [], "number": [], "name": []}
    for question in dict.fromkeys(questions):
        negated = _negate(question)
        if negated and len(out["negation"]) < CONTRASTS_PER_KIND:
            out["negation"].append((negated, question))
        number = _NUMBER.search(question)
        if number and len(out["number"]) < CONTRASTS_PER_KIND:
            changed = str(int(number.group(0)) + 1)
            out["number"].append(
                (question[: number.start()] + changed + question[number.end() :], question)
            )
        tokens = _name_tokens(question)
        if tokens and pool and len(out["name"]) < CONTRASTS_PER_KIND:
            other = str(pool[int(rng.integers(len(pool)))])
            if other.lower() not in question.lower():
                out["name"].append(
                    (re.sub(rf"\b{re.escape(tokens[0])}\b", other, question, count=1), question)
                )
    return out


def _negate(question: str) -> str | None:
    match = _AUX.search(question)
    if match is None or re.search(r"n't\b|\bnot\b|\bnever\b", question, re.IGNORECASE):
        return None
    word = match.group(0)
    negated = _NEGATED_AUX[word.lower()]
    if word[0].isupper():
        negated = negated[0].upper() + negated[1:]
    return question[: match.start()] + negated + question[match.end() :]


def _name_tokens(question: str) -> list[str]:
    """Names as written in the question (the check's own extractor decides what is a name)."""
    found = names(question)
    return [t for t in re.findall(r"[A-Z][\w]+", question) if t.lower() in found]
