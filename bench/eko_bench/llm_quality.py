"""Answer quality of a chat model on everyday questions, scored by what a right answer contains.

The set (bench/eko_bench/data/everyday_qa.jsonl, half French, half English) is one JSON object per
line: {"id", "lang", "question", "accept": [alternatives]}. An answer is right when it contains
one alternative as whole words, ignoring case, accents, punctuation and digit grouping
("1 000" = "1000"). Crude, but the same for every model, and a baseline scores the scorer:
a constant answer made of the set's most frequent expected word.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from eko.text import fold
from eko_bench.data_errors import BenchDataError

DEFAULT_QA_FILE = Path(__file__).parent / "data" / "everyday_qa.jsonl"
# A minimal prompt: the set measures the model, not Eko's persona.
QA_SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the question correctly in one short sentence, "
    "in the language of the question."
)
# Room for one short sentence: the answer's expected word comes early or not at all.
ANSWER_MAX_TOKENS = 64

_DIGIT_GROUP = re.compile(r"(?<=\d)[\s,.\u202f\u00a0](?=\d{3}(?!\d))")
_NOT_WORD = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True, slots=True)
class QAItem:
    id: str
    lang: str
    question: str
    accept: tuple[str, ...]


def load_questions(path: Path = DEFAULT_QA_FILE) -> list[QAItem]:
    items = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                item = QAItem(
                    id=str(raw["id"]),
                    lang=str(raw["lang"]),
                    question=str(raw["question"]),
                    accept=tuple(str(a) for a in raw["accept"]),
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise BenchDataError(f"{path}:{number}: not a question line ({exc})") from exc
            if not item.accept:
                raise BenchDataError(f"{path}:{number}: {item.id} accepts no answer")
            items.append(item)
    return items


def normalise(text: str) -> str:
    """Lower case, no accents, no punctuation, digit groups joined, single spaces."""
    text = _DIGIT_GROUP.sub("", text)
    return " ".join(_NOT_WORD.sub(" ", fold(text)).split())


def is_right(answer: str, item: QAItem) -> bool:
    padded = f" {normalise(answer)} "
    return any(f" {normalise(alternative)} " in padded for alternative in item.accept)


def score(answers: Sequence[str], items: Sequence[QAItem]) -> int:
    return sum(is_right(answer, item) for answer, item in zip(answers, items, strict=True))


def most_frequent_expected_word(items: Sequence[QAItem]) -> str:
    """The baseline's constant answer: the word that most alternatives contain."""
    words = Counter(
        word for item in items for alt in item.accept for word in normalise(alt).split()
    )
    return words.most_common(1)[0][0] if words else ""
