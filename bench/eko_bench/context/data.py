"""LoCoMo conversations loaded from their JSON file, and an embedder that remembers vectors."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from eko.embed import Embedder, Kind
from eko_bench.data_errors import BenchDataError

_DATE = "%I:%M %p on %d %B, %Y"


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]
    answer: str = ""


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[tuple[datetime, list[dict[str, Any]]]]
    questions: list[Question]
    # Per session: (speaker, fact, dia_id) — LoCoMo's observations, loaded as facts.
    observations: list[list[tuple[str, str, str]]]


def load_locomo(path: Path) -> list[Conversation]:
    """LoCoMo's JSON: a list of samples {sample_id, conversation, qa[, observation]}; a file
    that is not raises BenchDataError naming the sample and what is missing."""
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchDataError(f"{path}: not a LoCoMo JSON file ({exc})") from exc
    if not isinstance(samples, list):
        raise BenchDataError(f"{path}: expected a JSON list of conversations (LoCoMo format)")
    conversations = []
    for number, sample in enumerate(samples, start=1):
        try:
            conversations.append(_conversation(sample))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            name = sample.get("sample_id", "?") if isinstance(sample, dict) else "?"
            raise BenchDataError(
                f"{path}: conversation #{number} ({name}) is not in LoCoMo's format: {what}"
            ) from exc
    return conversations


def _conversation(sample: dict[str, Any]) -> Conversation:
    conv = sample["conversation"]
    numbers = sorted(
        int(key.split("_")[1]) for key in conv if re.fullmatch(r"session_\d+", key) and conv[key]
    )
    sessions = [
        (datetime.strptime(conv[f"session_{n}_date_time"], _DATE), conv[f"session_{n}"])
        for n in numbers
    ]
    questions = [
        Question(
            qa["question"],
            int(qa["category"]),
            _evidence_ids(qa.get("evidence", [])),
            str(qa.get("answer", "")),
        )
        for qa in sample["qa"]
    ]
    observed = sample.get("observation", {})
    observations = [
        [
            (speaker, fact, dia)
            for speaker, facts in observed.get(f"session_{n}_observation", {}).items()
            for fact, raw in facts
            for dia in _evidence_ids([raw] if isinstance(raw, str) else raw)[:1]
        ]
        for n in numbers
    ]
    for _, turns in sessions:
        for turn in turns:
            for key in ("speaker", "dia_id", "text"):
                if not isinstance(turn.get(key), str):
                    raise ValueError(f"a turn has no {key!r} string: {str(turn)[:80]}")
    return Conversation(
        sample["sample_id"],
        (conv["speaker_a"], conv["speaker_b"]),
        sessions,
        questions,
        observations,
    )


# The conversations of locomo-dev-3.json: Eko's defaults (ragMinScore, facts min score, budgets)
# were tuned on them. Any other LoCoMo conversation is the test split.
DEV_CONVERSATIONS = frozenset({"conv-26", "conv-30", "conv-41"})
SPLITS = ("all", "dev", "test", "dev-q", "test-q")
# Question-level splits: a question is in test-q when the stable hash of (conversation id,
# question text) falls in the last TEST_Q_SHARE of [0, 1); dev-q holds the rest. Retrieval is
# tuned on dev-q only, test-q is reported and never tuned on.
QUESTION_SPLITS = ("dev-q", "test-q")
TEST_Q_SHARE = 0.3


def question_bucket(sample_id: str, question: str) -> float:
    """A stable position in [0, 1) of a question: sha256 of "conversation id\x1fquestion"."""
    digest = hashlib.sha256(f"{sample_id}\x1f{question}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def in_question_split(sample_id: str, question: str, split: str) -> bool:
    """Whether a question belongs to `split` (conversation-level splits keep every question)."""
    if split not in QUESTION_SPLITS:
        return True
    is_test = question_bucket(sample_id, question) >= 1 - TEST_Q_SHARE
    return is_test == (split == "test-q")


def select_split(conversations: list[Conversation], split: str) -> list[Conversation]:
    """Conversation-level splits (all/dev/test) keep whole conversations; question-level ones
    (dev-q/test-q) keep every conversation with only the questions of the split."""
    if split in QUESTION_SPLITS:
        return [
            Conversation(
                c.sample_id,
                c.speakers,
                c.sessions,
                [q for q in c.questions if in_question_split(c.sample_id, q.text, split)],
                c.observations,
            )
            for c in conversations
        ]
    if split == "dev":
        return [c for c in conversations if c.sample_id in DEV_CONVERSATIONS]
    if split == "test":
        return [c for c in conversations if c.sample_id not in DEV_CONVERSATIONS]
    return conversations


def _evidence_ids(raw: Sequence[str]) -> list[str]:
    # A few LoCoMo evidence entries hold several ids ("D8:6; D9:17") or stray spaces.
    return [token for entry in raw for token in re.findall(r"D\d+:\d+", entry)]


class CachedEmbedder:
    """The configured embedder, remembering vectors: the same questions are embedded by several
    passes (configurations, sweeps); the cache keeps the run within minutes on 2 cores."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.calibrated_threshold = inner.calibrated_threshold
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    async def embed(self, texts: Sequence[str], *, kind: Kind = "query") -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._cache))
        if missing:
            vectors = await self._inner.embed(missing, kind=kind)
            self._cache.update(((kind, t), v) for t, v in zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[(kind, t)] for t in texts])
