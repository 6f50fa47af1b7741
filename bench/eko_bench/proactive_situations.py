"""Labelled lobby situations: for each, a fresh lobby with its curiosities and facts, the
messages, then one activity window (summary → opportunity path). Speaking is right for some and
wrong for others: precision and recall of "message".

Splits (bench/eko_bench/data/): "dev" is what the pre-score rules (eko/lobby/prescore.py) were
written on: lobby_situations.jsonl (24, written with the lobby), lobby_situations_heldout.jsonl
(40, written blind, then used for development) and lobby_situations_test.jsonl (40, written
blind, the test split of 2026-11-27 until its errors were read to improve the rules); "test" is
lobby_situations_test2.jsonl (40, written blind by another session and committed before any
run, measured once before the rules changed and never read to change them)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from eko.embed.base import Embedder
from eko.llm.types import Provider
from eko.lobby.prescore import Known, Prescore, says_it
from eko_bench.data_errors import BenchDataError, json_lines
from eko_bench.proactive_stack import new_stack, open_database

DATA = Path(__file__).parent / "data"
SPLITS: dict[str, tuple[Path, ...]] = {
    "dev": (
        DATA / "lobby_situations.jsonl",
        DATA / "lobby_situations_heldout.jsonl",
        DATA / "lobby_situations_test.jsonl",
    ),
    "test": (DATA / "lobby_situations_test2.jsonl",),
}
SPLITS["all"] = SPLITS["dev"] + SPLITS["test"]
START = datetime(2026, 3, 3, 14, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Situation:
    id: str
    label: str  # message | pass
    kind: str
    goals: list[tuple[str, str]]
    facts: list[tuple[str, str]]
    messages: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Outcome:
    situation: Situation
    predicted: str
    said: str | None
    model_calls: int
    seconds: float
    # "model" (its message was kept), "memory" (the curiosity or fact itself was posted
    # instead: eko/lobby/opportunity.py), None (nothing posted, or the model decided).
    written_by: str | None = None

    @property
    def said_right(self) -> bool:
        """A message where one was right that does what the situation calls for: poses one
        of its curiosities (goal_match) or gives one of its facts (fact_answer), by content
        (eko.lobby.prescore.says_it against each labelled item)."""
        if self.said is None or self.situation.label != "message":
            return False
        kind: Literal["goal", "fact"] = "goal" if self.situation.kind == "goal_match" else "fact"
        items = self.situation.goals if kind == "goal" else self.situation.facts
        return any(
            says_it(Prescore("message", "", kind, Known(str(n), subject, content)), self.said)
            for n, (subject, content) in enumerate(items)
        )


@dataclass(frozen=True, slots=True)
class Scores:
    precision: float
    recall: float
    accuracy: float
    true_pos: int
    false_pos: int
    false_neg: int
    true_neg: int


def load_situations(path: Path) -> list[Situation]:
    situations = []
    for number, raw in json_lines(path):
        try:
            if raw["label"] not in ("message", "pass"):
                raise ValueError(f"{raw.get('id')}: label must be message or pass")
            situations.append(
                Situation(
                    id=str(raw["id"]),
                    label=str(raw["label"]),
                    kind=str(raw.get("kind", "")),
                    goals=[(str(s), str(c)) for s, c in raw.get("goals", [])],
                    facts=[(str(s), str(c)) for s, c in raw.get("facts", [])],
                    messages=[(str(w), str(t)) for w, t in raw["messages"]],
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchDataError(f"{path}:{number}: not a situation ({exc!r})") from exc
    return situations


def split_situations(split: str) -> list[Situation]:
    return [situation for path in SPLITS[split] for situation in load_situations(path)]


async def run_situations(
    situations: Sequence[Situation],
    *,
    providers: Sequence[Provider],
    directory: Path,
    embedder: Embedder | None = None,
    decider: str = "model",
) -> list[Outcome]:
    """`decider`: EKO_LOBBY_DECIDER for the run (auto, rules or model); `embedder`: the
    memory's (default: the hashing test double)."""
    outcomes = []
    database = await open_database(directory)
    try:
        for situation in situations:
            stack = await new_stack(
                database, providers=providers, start=START, embedder=embedder, lobby_decider=decider
            )
            for subject, content in situation.goals:
                await stack.remember("goal", subject, content)
            for subject, content in situation.facts:
                await stack.remember("fact", subject, content)
            at = START
            for speaker, text in situation.messages:
                at += timedelta(minutes=1)
                await stack.say(speaker, text, at=at)
            stack.clock.now = at + timedelta(minutes=2)
            started = time.perf_counter()
            summary = await stack.lobby.summarizer.summarize(stack.room.id)
            reflection = None
            if summary is not None:
                reflection = await stack.lobby.opportunity.evaluate(summary)
            seconds = time.perf_counter() - started
            said = reflection.message if reflection is not None else None
            outcomes.append(
                Outcome(
                    situation=situation,
                    predicted="message" if said else "pass",
                    said=said,
                    model_calls=1 + (reflection.model_calls if reflection is not None else 0),
                    seconds=seconds,
                    written_by=(reflection.meta or {}).get("written_by") if reflection else None,
                )
            )
    finally:
        await database.dispose()
    return outcomes


def score(outcomes: Sequence[Outcome]) -> Scores:
    tp = sum(o.predicted == "message" and o.situation.label == "message" for o in outcomes)
    fp = sum(o.predicted == "message" and o.situation.label == "pass" for o in outcomes)
    fn = sum(o.predicted == "pass" and o.situation.label == "message" for o in outcomes)
    tn = sum(o.predicted == "pass" and o.situation.label == "pass" for o in outcomes)
    return Scores(
        precision=tp / (tp + fp) if tp + fp else 0.0,
        recall=tp / (tp + fn) if tp + fn else 0.0,
        accuracy=(tp + tn) / len(outcomes) if outcomes else 0.0,
        true_pos=tp,
        false_pos=fp,
        false_neg=fn,
        true_neg=tn,
    )
