"""Retrieval overhead per message: the hybrid recall over raw turns at 1k and 10k turns.

For each backend (SQLite, PostgreSQL) and each size, a fresh database holds one lobby room of N
turns: LoCoMo's turns (every conversation of `--data`, in order) cycled until N, each cycle a
year later than the one before, so full-text search and the turn vectors hold real text. Turns
are bulk-inserted (the full-text index is kept by the database's triggers) and indexed with the
configured embedder through `TurnIndex.reindex`, as `eko memory reindex` does; texts repeat when
cycling, so each distinct text is embedded once (the vectors are cached by text).

Then, per LoCoMo question (spread over the file), with the query's vector computed first (its
time is printed once, above the table, and excluded from every column):

* fts — the baseline: the plain full-text query alone (eko.store.message_search);
* catch-up — the request-path check for unindexed turns (nothing to embed here: all indexed);
* recall — dense search + full-text search + rank fusion + reading the turns and their
  neighbours (TurnIndex.search + recall_turns), what the hybrid recall adds to a message;
* build — the whole DualContextBuilder.build (recent window, summaries, facts, recall).

A question that needs several pieces is recalled with its phrases, as on the server: with
`--expander model` (the default, as the server's default) the configured model writes them
before any timing (recall_phrases.py, cached on disk), so recall and build time their recall,
never the model's writing; `--expander none` times the rule's sub-queries alone.

    eko bench recall [--data FILE] [--turns N ...] [--questions N] [--backend sqlite|postgres]
                     [--expander model|none]

PostgreSQL tables are ANALYZEd after the bulk load, as autovacuum would do soon after. What
the set-up made is frozen out of the garbage collector's passes before any timing, as a server
freezes what it made while starting (eko/api/heap.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
from rich.console import Console
from sqlalchemy import func, insert, select, text

from eko.api.heap import startup_objects_frozen
from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko.llm.providers import FunctionModel
from eko.llm.types import Provider
from eko.memory.context import DualContextBuilder
from eko.memory.multihop import MultiHop, decompose
from eko.memory.turn_index import COLLECTION, turn_text
from eko.memory.turn_recall import RecalledTurn
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.message_search import search_messages
from eko.store.models import Embedding, Message, Room, User
from eko_bench.context.data import load_locomo
from eko_bench.context.rooms import bench_memory
from eko_bench.context.summary_cache import cache_counts, configured_model
from eko_bench.databases import fresh_database
from eko_bench.recall_embeddings import CachedEmbedder, embed_passages, embed_queries
from eko_bench.recall_phrases import write_phrases
from eko_bench.recall_results import COLUMNS, Timings, table
from eko_bench.stats import percentile

SIZES = (1_000, 10_000)
QUESTIONS = 150
WARMUP = 5
BACKENDS = ("sqlite", "postgres")
# Cycle k of the corpus is dated k years after the first.
CYCLE_SHIFT = timedelta(days=365)
INSERT_BATCH = 1_000


@dataclass(frozen=True, slots=True)
class CorpusTurn:
    speaker: str
    text: str
    when: datetime


@dataclass(frozen=True, slots=True)
class Corpus:
    turns: list[CorpusTurn]
    questions: list[str]


def corpus_from_locomo(path: Path, questions: int = QUESTIONS) -> Corpus:
    """Every turn of the file's conversations in order (a minute apart within a session), and
    `questions` of its questions spread evenly over the file (adversarial ones left out)."""
    turns: list[CorpusTurn] = []
    asked: list[str] = []
    for conversation in load_locomo(path):
        for started, session in conversation.sessions:
            for index, turn in enumerate(session):
                when = started + timedelta(minutes=index)
                turns.append(CorpusTurn(turn["speaker"], turn["text"], when))
        asked.extend(q.text for q in conversation.questions if q.category != 5 and q.text)
    step = max(1, len(asked) // questions) if questions else 1
    return Corpus(turns, asked[::step][:questions])


def indexed_texts(turns: Sequence[CorpusTurn], previous_chars: int) -> list[str]:
    """Each turn's text as the turn index embeds it (turn_text)."""
    return [
        turn_text(
            turn.speaker,
            turn.text,
            turn.when,
            previous=(before.speaker, before.text, before.when) if before else None,
            chars=previous_chars,
        )
        for before, turn in zip([None, *turns], turns, strict=False)
    ]


@dataclass
class Loaded:
    room: Room
    asker: User
    turns: int
    load_s: float
    index_s: float
    vectors: int


def builder_for(
    settings: Settings,
    database: Database,
    embedder: Embedder,
    expander: Sequence[Provider] = (),
) -> DualContextBuilder:
    """The dual context builder as the chat path builds it. No model is called but
    `expander`, for list questions' phrases (already in its cache: write_phrases)."""
    memory = bench_memory(
        settings.model_copy(update={"database_url": database.url}),
        database,
        embedder,
        [FunctionModel(lambda request: "", name="bench", model="bench")],
        expander,
    )
    return memory.context


async def load_room(
    database: Database, builder: DualContextBuilder, corpus: Corpus, turns: int
) -> Loaded:
    """A lobby room of `turns` turns of the corpus (cycled), every turn indexed."""
    started = time.perf_counter()
    async with database.session() as session:
        users: dict[str, User] = {}
        for speaker in dict.fromkeys(turn.speaker for turn in corpus.turns):
            users[speaker], _ = await user_repo.create_user(session, display_name=speaker)
        first = next(iter(users.values()))
        room = await room_repo.create_room(
            session, kind="lobby", name=f"recall-{turns}", persona="eko", created_by=first.id
        )
        for user in users.values():
            if user.id != first.id:
                await room_repo.add_member(session, room_id=room.id, user_id=user.id)
    rows, char_end = [], 0
    for index in range(turns):
        cycle, position = divmod(index, len(corpus.turns))
        turn = corpus.turns[position]
        char_end += len(turn.text)
        rows.append(
            {
                "id": uuid.uuid4().hex,
                "room_id": room.id,
                "seq": index + 1,
                "sender_id": users[turn.speaker].id,
                "role": "user",
                "type": "message",
                "content": turn.text,
                "meta": {},
                "char_count": len(turn.text),
                "char_end": char_end,
                "dedupe_key": f"bench-recall:{room.id}:{index + 1}",
                "created_at": turn.when + cycle * CYCLE_SHIFT,
            }
        )
    for start in range(0, len(rows), INSERT_BATCH):
        async with database.session() as session:
            await session.execute(insert(Message), rows[start : start + INSERT_BATCH])
            await session.commit()
    loaded_at = time.perf_counter()
    async with database.session() as session:
        vectors = await builder.turns.reindex(session, room_id=room.id)
    if database.dialect == "postgresql":  # as autovacuum would, soon after a bulk load
        async with database.session() as session:
            await session.execute(text("ANALYZE"))
    return Loaded(
        room=room,
        asker=first,
        turns=turns,
        load_s=loaded_at - started,
        index_s=time.perf_counter() - loaded_at,
        vectors=vectors,
    )


async def measure(
    database: Database,
    builder: DualContextBuilder,
    settings: Settings,
    embedder: Embedder,
    loaded: Loaded,
    questions: Sequence[str],
    *,
    warmup: int = WARMUP,
    phrases: Mapping[str, Sequence[str]] | None = None,
) -> Timings:
    """Per question, each part's time in ms; the first `warmup` questions are asked once
    before, not counted.

    The query's vector comes from `embedder`, the builder's, before any timing: with a cache
    (CachedEmbedder, primed by `embed_queries`) its embedding stays out of every column, and
    so do its `phrases`' (write_phrases), recalled as sub-queries."""
    timings = Timings(database.dialect, loaded.turns)
    room_id = loaded.room.id
    warm = list(questions[:warmup])  # fewer than `warmup` when there are fewer questions
    for number, question in enumerate([*warm, *questions]):
        counted = number >= len(warm)
        vector = (await embedder.embed([question], kind="query"))[0]
        async with database.session() as session:
            started = time.perf_counter()
            await search_messages(
                session, dialect=database.dialect, room_id=room_id, query=question, limit=12
            )
            fts_ms = _ms(started)
            started = time.perf_counter()
            await builder.indexer.catch_up(
                session, room_id=room_id, limit=settings.memory_recall_catch_up
            )
            catch_up_ms = _ms(started)
            started = time.perf_counter()
            recalled = await _recall(
                builder, settings, room_id, question, vector, (phrases or {}).get(question, ())
            )
            recall_ms = _ms(started)
        started = time.perf_counter()
        await builder.build(room=loaded.room, user=loaded.asker, query=question)
        build_ms = _ms(started)
        if counted:
            for column, value in zip(
                COLUMNS, (fts_ms, catch_up_ms, recall_ms, build_ms), strict=True
            ):
                timings.ms[column].append(value)
            timings.recalled.append(recalled)
    timings.load_s, timings.index_s, timings.vectors = (
        loaded.load_s,
        loaded.index_s,
        loaded.vectors,
    )
    return timings


async def _recall(
    builder: DualContextBuilder,
    settings: Settings,
    room_id: str,
    question: str,
    vector: np.ndarray,
    phrases: Sequence[str],
) -> list[RecalledTurn]:
    """The builder's own turn recall (step 3), from a query vector already computed; a
    question needing several pieces embeds its sub-queries, its phrases among them (cached
    like the question's)."""
    hop = decompose(question) if settings.memory_multihop_enabled else MultiHop("single")
    if hop.needs_several and phrases:
        hop = hop.with_phrases(list(phrases))
    vectors = [vector]
    if hop.sub_queries:
        vectors.extend(await builder.embedder.embed(hop.sub_queries, kind="query"))
    found = await builder.recall.recall(
        room_id=room_id,
        query=question,
        hop=hop,
        vectors=vectors,
        facts=[],
        before_seq=None,
        stats={},
    )
    return found.turns


async def row_counts(database: Database, room_id: str, model: str) -> tuple[int, int]:
    """(messages, turn vectors) stored for the room."""
    async with database.session() as session:
        messages = await session.scalar(
            select(func.count()).select_from(Message).where(Message.room_id == room_id)
        )
        vectors = await session.scalar(
            select(func.count())
            .select_from(Embedding)
            .join(Message, Message.id == Embedding.item_id)
            .where(
                Embedding.collection == COLLECTION,
                Embedding.model == model,
                Message.room_id == room_id,
            )
        )
    return int(messages or 0), int(vectors or 0)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


async def run(
    *,
    settings: Settings,
    console: Console,
    data: Path,
    sizes: Sequence[int] | None = None,
    questions: int = QUESTIONS,
    backends: Sequence[str] | None = None,
    expander: str = "model",
) -> None:
    """`sizes` default to SIZES (1k, 10k turns), `backends` to both; `expander`: "model"
    (the configured model writes list questions' phrases) or "none" (the rule alone)."""
    corpus = corpus_from_locomo(data, questions)
    embedder = CachedEmbedder(build_embedder(settings))
    # As the turn index embeds them: the room's indexing reads the cache.
    distinct = list(
        dict.fromkeys(indexed_texts(corpus.turns, settings.memory_index_previous_chars))
    )
    cache = settings.home / "bench-cache" / "recall"
    with console.status(f"embedding {len(distinct):,} distinct turns of {data.name}…"):
        started = time.perf_counter()
        source = await embed_passages(embedder, distinct, cache)
    console.print(
        f"LoCoMo {data.name}: {len(corpus.turns):,} turns ({len(distinct):,} distinct, embedded "
        f"once by {embedder.name}: {source}, {time.perf_counter() - started:.0f} s), "
        f"{len(corpus.questions)} questions (+{min(WARMUP, len(corpus.questions))} warm-up)"
    )
    embed_ms = await embed_queries(embedder, corpus.questions)
    console.print(
        f"query embedding (once per question, excluded below): p50 "
        f"{percentile(embed_ms, 0.5):.1f} ms, p95 {percentile(embed_ms, 0.95):.1f} ms"
    )
    providers: list[Provider] = []
    phrases: dict[str, list[str]] = {}
    if expander == "model":
        providers, described = configured_model(settings, "expansions")
        with console.status(f"list questions' phrases by {described}…"):
            phrases = await write_phrases(corpus.questions, settings=settings, providers=providers)
        written = [p for listed in phrases.values() for p in listed]
        await embed_queries(embedder, written)  # their embedding is excluded too
        console.print(
            f"phrases: {len(phrases)} of {len(corpus.questions)} questions need several "
            f"pieces, {sum(1 for listed in phrases.values() if listed)} got phrases "
            f"({len(written)} in all) from {described}; {cache_counts(providers)}"
        )
    else:
        console.print("phrases: none (--expander none: the rule's sub-queries alone)")
    results = []
    for backend in dict.fromkeys(backends or BACKENDS):
        for size in sizes or SIZES:
            with console.status(f"recall bench on {backend}, {size:,} turns…"):
                async with fresh_database(backend) as database:
                    builder = builder_for(settings, database, embedder, providers)
                    loaded = await load_room(database, builder, corpus, size)
                    messages, vectors = await row_counts(database, loaded.room.id, embedder.name)
                    # As a server freezes what it made while starting (eko/api/heap.py).
                    with startup_objects_frozen():
                        result = await measure(
                            database,
                            builder,
                            settings,
                            embedder,
                            loaded,
                            corpus.questions,
                            phrases=phrases,
                        )
            results.append(result)
            console.print(
                f"{backend} {size:,} turns: {messages:,} messages, {vectors:,} turn vectors"
            )
    console.print(table(results, embedder.name))
