"""Scoring contexts: evidence recall, fact hits, prompt size; the similarity-floor sweeps."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import func, select

from eko.bench.context.rooms import LoadedRoom, Setup, context_for
from eko.config import Settings
from eko.memory.context import ContextParts, ItemPart, SummaryPart, render_context
from eko.memory.service import Memory
from eko.store.db import Database

FLOORS = (0.70, 0.74, 0.75, 0.76, 0.78, 0.80)
ITEM_FLOORS = (0.75, 0.78, 0.80, 0.82, 0.84, 0.86)


@dataclass
class Score:
    questions: int = 0
    all_covered: int = 0
    any_covered: int = 0
    chars: list[int] = field(default_factory=list)
    summaries: list[int] = field(default_factory=list)
    build_ms: list[float] = field(default_factory=list)
    by_category: dict[int, list[bool]] = field(default_factory=dict)
    # Questions with a retrieved fact observed in one of their evidence turns; facts used.
    fact_hits: int = 0
    facts: list[int] = field(default_factory=list)

    def add(
        self,
        covered: list[bool],
        chars: int,
        summaries: int,
        category: int,
        fact_hit: bool = False,
        facts: int = 0,
    ) -> None:
        self.questions += 1
        self.all_covered += all(covered)
        self.any_covered += any(covered)
        self.chars.append(chars)
        self.summaries.append(summaries)
        self.by_category.setdefault(category, []).append(all(covered))
        self.fact_hits += fact_hit
        self.facts.append(facts)


def fact_hit(loaded: LoadedRoom, seqs: list[int], items: Sequence[ItemPart]) -> bool:
    return any(loaded.fact_seq.get(item.item_id) in seqs for item in items)


def covered(
    seqs: list[int],
    recent_first_seq: int | None,
    parts: Sequence[SummaryPart],
    ranges: dict[str, tuple[int, int]],
) -> list[bool]:
    result = []
    for seq in seqs:
        in_recent = recent_first_seq is not None and seq >= recent_first_seq
        in_summary = any(ranges[p.summary_id][0] <= seq <= ranges[p.summary_id][1] for p in parts)
        result.append(in_recent or in_summary)
    return result


async def summary_ranges(database: Database) -> dict[str, tuple[int, int]]:
    from eko.store.memory_models import Summary

    async with database.session() as session:
        rows = await session.execute(select(Summary.id, Summary.first_seq, Summary.last_seq))
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}


async def evaluate(
    memory: Memory, rooms: list[LoadedRoom], ranges: dict[str, tuple[int, int]]
) -> tuple[Score, int]:
    score, skipped = Score(), 0
    for loaded in rooms:
        for question in loaded.conversation.questions:
            seqs = [loaded.seq_of[e] for e in question.evidence if e in loaded.seq_of]
            if not seqs:
                skipped += 1
                continue
            started = time.perf_counter()
            context = await context_for(memory, loaded, question.text)
            score.build_ms.append((time.perf_counter() - started) * 1000)
            parts = context.parts
            score.add(
                covered(seqs, parts.recent.first_seq, parts.summaries, ranges),
                len(context.text),
                len(parts.summaries),
                question.category,
                fact_hit(loaded, seqs, parts.items),
                len(parts.items),
            )
    return score, skipped


@dataclass
class Sweep:
    summaries: dict[float, Score]
    items: dict[float, Score]
    # Similarities of retrieved summaries / facts to questions: covering evidence or not.
    summary_sims: tuple[list[float], list[float]]
    item_sims: tuple[list[float], list[float]]


async def sweep(
    setup: Setup,
    ranges: dict[str, tuple[int, int]],
    settings: Settings,
    floors: tuple[float, float],
) -> Sweep:
    """One pass with no floor and every candidate (setup.wide), then each floor applied offline
    exactly as the builder applies it: filter on similarity, keep the top N by score."""
    rag_floor, item_floor = floors
    top_summaries, top_items = settings.rag_max_summaries, settings.memory_context_max_items
    result = Sweep(
        {f: Score() for f in FLOORS}, {f: Score() for f in ITEM_FLOORS}, ([], []), ([], [])
    )
    for loaded in setup.rooms:
        for question in loaded.conversation.questions:
            seqs = [loaded.seq_of[e] for e in question.evidence if e in loaded.seq_of]
            if not seqs:
                continue
            parts = (await context_for(setup.wide, loaded, question.text)).parts
            for part in parts.summaries:
                first, last = ranges[part.summary_id]
                hit = any(first <= seq <= last for seq in seqs)
                result.summary_sims[0 if hit else 1].append(part.similarity)
            for item in parts.items:
                hit = loaded.fact_seq.get(item.item_id) in seqs
                result.item_sims[0 if hit else 1].append(item.score)
            default_items = [i for i in parts.items if i.score >= item_floor][:top_items]
            default_summaries = [p for p in parts.summaries if p.similarity >= rag_floor][
                :top_summaries
            ]
            for floor in FLOORS:
                kept = [p for p in parts.summaries if p.similarity >= floor][:top_summaries]
                text = render_context(
                    ContextParts(recent=parts.recent, summaries=kept, items=default_items)
                )
                result.summaries[floor].add(
                    covered(seqs, parts.recent.first_seq, kept, ranges),
                    len(text),
                    len(kept),
                    question.category,
                )
            for floor in ITEM_FLOORS:
                items = [i for i in parts.items if i.score >= floor][:top_items]
                text = render_context(
                    ContextParts(recent=parts.recent, summaries=default_summaries, items=items)
                )
                result.items[floor].add(
                    [True],
                    len(text),
                    len(default_summaries),
                    question.category,
                    fact_hit(loaded, seqs, items),
                    len(items),
                )
    return result


@dataclass
class Result:
    setup: Setup
    dual: Score
    recent: Score
    sweep: Sweep
    levels: dict[int, int]
    skipped: int


async def summary_levels(database: Database) -> dict[int, int]:
    from eko.store.memory_models import Summary

    async with database.session() as session:
        rows = await session.execute(select(Summary.level, func.count()).group_by(Summary.level))
        return {int(level): int(count) for level, count in rows}
