"""Content recall of Eko's context and of the baselines, question by question (same run)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Protocol

from eko.memory.service import Memory
from eko_bench.context.baselines import BM25, PastTurn, bm25_context, fill, random_context
from eko_bench.context.content import Passages
from eko_bench.context.data import Conversation, Question
from eko_bench.context.rooms import LoadedRoom, Setup, context_for
from eko_bench.context.scoring import covered

SCORED_CATEGORIES = (1, 2, 3, 4)  # 5 (adversarial: no answer in the conversation) is excluded
RANDOM = "random turns (same-conversation control)"
VARIANT_METHODS = ("eko", "eko without facts", RANDOM, "BM25 turns")


@dataclass(frozen=True, slots=True)
class Variant:
    """One configuration of Eko's context scored with its own baselines."""

    label: str  # appended to the row names ("" for the configured settings)
    memory: Memory
    no_facts: Memory
    # The character budget random and BM25 fill; None: the size of Eko's context (with facts).
    budget: int | None = None


class Peer(Protocol):
    """Another memory system scored beside Eko (peer_mem0.py): what it retrieves for a
    question, best first, fills each budget as BM25's ranking does."""

    name: str

    async def ranked(self, conversation: Conversation, question: str) -> list[PastTurn]: ...


def method_names(variants: Sequence[Variant], peers: Sequence[str] = ()) -> list[str]:
    names = [_named(m, v) for v in variants for m in (*VARIANT_METHODS, *peers)]
    return [*names, "recent only", "unrelated (control)"]


def _named(method: str, variant: Variant) -> str:
    return f"{method}, {variant.label}" if variant.label else method


@dataclass
class MethodScore:
    # The strict score (every evidence turn within one passage), per category.
    found: dict[int, list[bool]] = field(default_factory=dict)
    chars: list[int] = field(default_factory=list)
    # The secondary score: the answer (of 2+ content words) as a phrase within one passage.
    answered: list[bool] = field(default_factory=list)

    def add(self, category: int, hit: bool, chars: int, answered: bool = False) -> None:
        self.found.setdefault(category, []).append(hit)
        self.chars.append(chars)
        self.answered.append(answered)

    def score(self, category: int, evidence: Sequence[str], answer: str, text: Passages) -> bool:
        hit = text.found(evidence)
        self.add(category, hit, text.chars, text.answer_found(answer))
        return hit

    def share(self, category: int | None = None) -> tuple[int, int]:
        hits = (
            [h for c in self.found.values() for h in c]
            if category is None
            else self.found.get(category, [])
        )
        return sum(hits), len(hits)


@dataclass
class RecallResult:
    methods: dict[str, MethodScore]
    # Secondary: evidence turns inside a retrieved summary's range or the recent window.
    range_covered: MethodScore
    questions: int
    excluded_adversarial: int
    skipped_no_evidence: int
    # One per scored question: what `--report` writes (which method found it, at what size).
    per_question: list[dict[str, object]] = field(default_factory=list)


def select_questions(
    conversations: list[Conversation], limit: int | None
) -> list[tuple[Conversation, Question]]:
    """Scored questions, interleaved across conversations so a --limit run sees them all."""
    per_conv = [
        [(c, q) for q in c.questions if q.category in SCORED_CATEGORIES] for c in conversations
    ]
    ordered = [pair for row in zip_longest(*per_conv) for pair in row if pair is not None]
    return ordered[:limit] if limit is not None else ordered


def past_turns(conversation: Conversation) -> tuple[list[PastTurn], dict[str, str]]:
    lines: list[PastTurn] = []
    texts: dict[str, str] = {}
    for when, turns in conversation.sessions:
        for turn in turns:
            texts[turn["dia_id"]] = turn["text"]
            line = f"({when:%Y-%m-%d}) {turn['speaker']}: {turn['text']}"
            lines.append(PastTurn(len(lines), line))
    return lines, texts


async def measure(
    setup: Setup,
    ranges: dict[str, tuple[int, int]],
    selected: list[tuple[Conversation, Question]],
    variants: Sequence[Variant] = (),
    peers: Sequence[Peer] = (),
) -> RecallResult:
    """Every question scored for each variant (default: the configured settings) with that
    variant's random and BM25 baselines and the peers at its budget; recent-only, the control
    and range coverage once."""
    variants = list(variants) or [Variant("", setup.memory, setup.no_facts)]
    rooms = {room.conversation.sample_id: room for room in setup.rooms}
    indexes: dict[str, tuple[list[PastTurn], dict[str, str], BM25]] = {}
    methods = {name: MethodScore() for name in method_names(variants, [p.name for p in peers])}
    coverage = MethodScore()
    kept: list[tuple[LoadedRoom, Question, list[str], str]] = []
    rows: list[dict[str, object]] = []
    skipped = 0
    for number, (conversation, question) in enumerate(selected):
        loaded = rooms[conversation.sample_id]
        if conversation.sample_id not in indexes:
            turns, texts = past_turns(conversation)
            indexes[conversation.sample_id] = (turns, texts, BM25([t.line for t in turns]))
        turns, texts, bm25 = indexes[conversation.sample_id]
        evidence = [texts[e] for e in question.evidence if e in texts]
        seqs = [loaded.seq_of[e] for e in question.evidence if e in loaded.seq_of]
        if not evidence or not seqs:
            skipped += 1
            continue
        recent = await context_for(setup.recent_only, loaded, question.text)
        candidates = {"recent only": recent.text}
        retrieved = {peer.name: await peer.ranked(conversation, question.text) for peer in peers}
        first = None
        for variant in variants:
            context = await context_for(variant.memory, loaded, question.text)
            no_facts = await context_for(variant.no_facts, loaded, question.text)
            first = first or context
            budget = variant.budget or len(context.text)
            candidates[_named("eko", variant)] = context.text
            candidates[_named("eko without facts", variant)] = no_facts.text
            candidates[_named(RANDOM, variant)] = random_context(turns, budget, number)
            candidates[_named("BM25 turns", variant)] = bm25_context(
                turns, bm25, question.text, budget
            )
            for name, ranked in retrieved.items():
                candidates[_named(name, variant)] = fill(ranked, range(len(ranked)), budget)
        assert first is not None
        context = first
        budget = len(context.text)
        hits = {
            name: methods[name].score(
                question.category, evidence, question.answer, Passages.split(text)
            )
            for name, text in candidates.items()
        }
        rows.append(
            {
                "conversation": conversation.sample_id,
                "question": question.text,
                "category": question.category,
                "answer": question.answer,
                "evidence": question.evidence,
                "found": hits,
                "chars": {name: len(text) for name, text in candidates.items()},
            }
        )
        parts = context.parts
        coverage.add(
            question.category,
            all(covered(seqs, parts.recent.first_seq, parts.summaries, ranges)),
            budget,
        )
        kept.append((loaded, question, evidence, context.text))
    # Control: each question against Eko's context for a question of another conversation.
    for position, (loaded, question, evidence, _) in enumerate(kept):
        other = next(
            (item for item in kept[position + 1 :] + kept[:position] if item[0] is not loaded),
            None,
        )
        if other is not None:
            methods["unrelated (control)"].score(
                question.category, evidence, question.answer, Passages.split(other[3])
            )
    # The caller counts category 5.
    return RecallResult(methods, coverage, len(kept), 0, skipped, rows)
