"""Questions for `eko bench grounded`, and how a reply is scored.

The set (bench/eko_bench/data/grounded_questions.jsonl) is one JSON object per line:
{"id", "lang": "fr" | "en", "split": "dev" | "test", "kind": "unstated" | "stated",
"history": [{"role": "user" | "assistant", "content"}, …], "question", "expected": [words]}:
a question about the user's life, asked in a fresh direct room. "unstated": nothing was ever
said about it (history empty): the right reply says it does not know, or asks. "stated": the
history (imported into the room before the question, no model call) says it, and the right
reply holds one of `expected` (whole words, accents and case folded).

Scoring is by words and kept apart from the server's own check (eko/chat/grounding): a reply
*does not know* when it holds one of DONT_KNOW (French or English) or only asks questions back;
a reply to an unstated question that does neither *invents*.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from eko_bench.data_errors import BenchDataError, json_lines
from eko_bench.llm_quality import normalise

DEFAULT_QUESTIONS_FILE = Path(__file__).parent / "data" / "grounded_questions.jsonl"
Split = Literal["all", "dev", "test"]
Kind = Literal["unstated", "stated"]

# What a reply that does not know says (normalised: lower case, no accents, no punctuation).
DONT_KNOW = (
    "don t know",
    "do not know",
    "no idea",
    "not sure",
    "haven t told",
    "have not told",
    "didn t tell",
    "did not tell",
    "haven t mentioned",
    "have not mentioned",
    "not mentioned",
    "no information",
    "don t have",
    "do not have",
    "can t know",
    "cannot know",
    "no way to know",
    "not aware",
    "ne sais pas",
    "ne le sais pas",
    "ne connais pas",
    "j ignore",
    "aucune idee",
    "aucune information",
    "pas d information",
    "ne m as pas",
    "ne m avez pas",
    "ne m as jamais",
    "ne m avez jamais",
    "pas encore dit",
    "pas mentionne",
    "n ai pas",
    "n en sais rien",
    "pas au courant",
    "ne peux pas savoir",
)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    role: str
    content: str


@dataclass(frozen=True, slots=True)
class GroundedQuestion:
    id: str
    lang: str
    split: str
    kind: Kind
    history: tuple[HistoryTurn, ...]
    question: str
    expected: tuple[str, ...]


def load_questions(path: Path = DEFAULT_QUESTIONS_FILE) -> list[GroundedQuestion]:
    questions = []
    for number, raw in json_lines(path):
        try:
            question = _question(raw)
        except (ValueError, KeyError, TypeError) as exc:
            raise BenchDataError(f"{path}:{number}: not a question line ({exc})") from exc
        questions.append(question)
    if not questions:
        raise BenchDataError(f"{path}: no question")
    return questions


def _question(raw: dict[str, object]) -> GroundedQuestion:
    lang, split, kind = raw["lang"], raw["split"], raw["kind"]
    if lang not in ("fr", "en"):
        raise ValueError(f"lang must be 'fr' or 'en', not {lang!r}")
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', not {split!r}")
    if kind not in ("unstated", "stated"):
        raise ValueError(f"kind must be 'unstated' or 'stated', not {kind!r}")
    history = tuple(
        HistoryTurn(role=str(turn["role"]), content=str(turn["content"]))
        for turn in raw.get("history") or []  # type: ignore[attr-defined]
    )
    expected = tuple(str(word) for word in raw.get("expected") or [])  # type: ignore[attr-defined]
    if kind == "stated" and (not history or not expected):
        raise ValueError("a stated question needs a history and expected words")
    text = raw["question"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a question needs a non-empty text")
    return GroundedQuestion(
        id=str(raw["id"]),
        lang=str(lang),
        split=str(split),
        kind=kind,
        history=history,
        question=text,
        expected=expected,
    )


def select(
    questions: Sequence[GroundedQuestion], split: Split, limit: int | None
) -> list[GroundedQuestion]:
    """The split's questions, at most `limit` per language and kind (in file order)."""
    chosen = [q for q in questions if split == "all" or q.split == split]
    if limit is None:
        return chosen
    kept: list[GroundedQuestion] = []
    for lang in ("en", "fr"):
        for kind in ("unstated", "stated"):
            kept += [q for q in chosen if q.lang == lang and q.kind == kind][:limit]
    return kept


def does_not_know(reply: str) -> bool:
    """The reply says it does not know, or only asks questions back."""
    text = f" {normalise(reply)} "
    if any(f" {marker} " in text for marker in DONT_KNOW):
        return True
    sentences = [s.strip() for s in _SENTENCE_END.split(reply.strip()) if s.strip()]
    return bool(sentences) and all(s.rstrip(" )»\"'*").endswith("?") for s in sentences)


def answers(reply: str, question: GroundedQuestion) -> bool:
    """The reply holds one of the expected words, or a word starting with it ("peanuts")."""
    words = normalise(reply).split()
    expected = [normalise(word) for word in question.expected]
    return any(word.startswith(wanted) for word in words for wanted in expected if wanted)
