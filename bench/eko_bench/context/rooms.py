"""Loading LoCoMo conversations as lobby rooms, with summaries built session by session."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from eko.chat.engine import build_chat_engine
from eko.chat.engine.prompt_preview import PromptPreview
from eko.config import Settings
from eko.embed import Embedder
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.memory.context_parts import DualContext
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.memory.service import Memory, build_memory
from eko.prompts.library import PromptLibrary
from eko.store import chat_profile
from eko.store import messages as message_repo
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.migrate import upgrade
from eko.store.models import LLMCall, Room, User
from eko.store.vectors import build_memory_index, build_vector_index
from eko.wiring import attach_memory
from eko_bench.context.data import Conversation
from eko_bench.context.readers import Reader
from eko_bench.context.summarizer import ExtractiveSummarizer

# Questions probed after every session for the growth table.
GROWTH_PROBES = 5


# The wait for a list question's phrases in the bench (the server's default is 8 s).
EXPAND_TIMEOUT_S = 600.0


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
    # Recent turns and summaries, no facts: LoCoMo's facts are its annotated observations
    # (gold text written from the evidence turns), not facts Eko extracted.
    no_facts: Memory
    database: Database
    rooms: list[LoadedRoom]
    summary_calls: int
    load_s: float
    # Per context budget (memory_context_max_chars): (Eko with facts, Eko without facts).
    budgets: dict[int, tuple[Memory, Memory]] = field(default_factory=dict)


def bench_memory(
    settings: Settings,
    database: Database,
    embedder: Embedder,
    summarizer: Sequence[Provider],
    expander: Sequence[Provider] = (),
    **overrides: Any,
) -> Memory:
    """Eko's memory on a bench database, with `summarizer` as its model and `overrides` on the
    settings (no model call is made unless the summarizer is asked). `expander`: the models
    asked for a list question's phrases (eko.memory.query_expansion; none: no phrases)."""
    if not expander:
        overrides = {"memory_recall_expand": 0, **overrides}
    else:
        # The bench measures what the phrases find, not how fast a loaded machine writes
        # them: a phrase given up on would silently score the rule alone.
        overrides = {"memory_recall_expand_timeout_s": EXPAND_TIMEOUT_S, **overrides}
    tuned = settings.model_copy(update=overrides)
    recorder = DatabaseCallRecorder(database)
    runtime = LLMRuntime(list(summarizer), recorder)
    return build_memory(
        settings=tuned,
        database=database,
        runtime=runtime,
        embedder=embedder,
        # As the server wires it: the collections it searches in memory, in memory.
        vectors=build_memory_index(
            build_vector_index(database, tuned), tuned, feed=None, shared_feed=True
        ),
        prompts=PromptLibrary(),
        expansion_runtime=LLMRuntime(list(expander), recorder) if expander else None,
    )


@dataclass(frozen=True, slots=True)
class PromptVariant:
    """A reader (its prompt budget) and the context budget: the writer's prompt is rendered by
    the chat engine built for them (`eko bench context --provider-budget`)."""

    label: str
    reader: Reader
    preview: PromptPreview


async def prompt_variants(
    settings: Settings,
    built: Setup,
    embedder: Embedder,
    summarizer: Sequence[Provider],
    readers: Sequence[Reader],
    budgets: Sequence[int],
    expander: Sequence[Provider] = (),
) -> list[PromptVariant]:
    """One chat engine per reader and context budget (default: the configured one), composed
    as the server composes it (build_chat_engine, then memory as node M: eko.wiring), with
    memory without LoCoMo's annotated facts (gold text: see 'eko without facts'). Each asker
    has finished the intro (first name and address form known), as a member who has talked
    for months has: a new member's first questions get the intro mode instead."""
    for loaded in built.rooms:
        await _finish_intro(built.database, loaded)
    variants = []
    for reader in readers:
        for budget in budgets or [settings.memory_context_max_chars]:
            tuned = settings.model_copy(
                update={
                    "database_url": built.database.url,
                    "summarize_every_n_chars": built.every,
                    "memory_context_max_chars": budget,
                    "memory_context_max_items": 0,
                    # The bench measures what the prompt holds, not how fast a loaded machine
                    # builds it: a node given up on would silently score an empty section.
                    "chat_node_timeout_s": EXPAND_TIMEOUT_S,
                }
            )
            memory = bench_memory(tuned, built.database, embedder, summarizer, expander)
            engine = build_chat_engine(
                settings=tuned,
                database=built.database,
                runtime=reader.runtime,
                prompts=PromptLibrary(),
                embedder=embedder,
                vectors=build_vector_index(built.database, tuned),
            )
            attach_memory(engine, memory, tuned)
            label = reader.label if len(budgets) < 2 else f"{reader.label}, {budget:,} budget"
            variants.append(PromptVariant(label, reader, engine.preview))
    return variants


async def _finish_intro(database: Database, loaded: LoadedRoom) -> None:
    async with database.session() as session:
        for key, value in (
            ("first_name", loaded.asker.display_name),
            ("use_tu_form", True),
            ("main_city", "not said"),
            ("main_activity", "not said"),
        ):
            await chat_profile.upsert_fact(
                session, user_id=loaded.asker.id, fact_key=key, value=value
            )


def extractive_provider() -> Provider:
    return FunctionModel(ExtractiveSummarizer(), name="extractive", model="extractive")


async def setup(
    settings: Settings,
    embedder: Embedder,
    conversations: list[Conversation],
    every: int,
    workdir: Path,
    summarizer: Sequence[Provider] | None = None,
    budgets: Sequence[int] = (),
    database: Database | None = None,
    expander: Sequence[Provider] = (),
) -> Setup:
    """`summarizer`: the providers that write summaries (default: the extractive stand-in);
    `budgets`: the context budgets to build Eko's context at (memory_context_max_chars);
    `database`: a fresh, migrated one (default: a new SQLite file in `workdir`)."""
    started = time.perf_counter()
    if database is None:
        database = Database(f"sqlite+aiosqlite:///{workdir / f'context-{every}.db'}")
        await upgrade(database)
    if summarizer is None:
        summarizer = [extractive_provider()]
    base = settings.model_copy(
        update={"database_url": database.url, "summarize_every_n_chars": every}
    )
    # The rooms are loaded (and their growth probed) without phrases: only scored contexts ask.
    loader = bench_memory(base, database, embedder, summarizer)
    memory = bench_memory(base, database, embedder, summarizer, expander)
    recent_only = bench_memory(
        base,
        database,
        embedder,
        summarizer,
        rag_max_summaries=0,
        memory_context_max_items=0,
        memory_recall_max_chars=0,
    )
    no_facts = bench_memory(
        base, database, embedder, summarizer, expander, memory_context_max_items=0
    )
    rooms = [await _load(loader, recent_only, database, conv) for conv in conversations]
    async with database.session() as session:
        calls = (
            await session.execute(
                select(func.count()).select_from(LLMCall).where(LLMCall.purpose.like("summary_l%"))
            )
        ).scalar_one()
    swept = {
        budget: (
            bench_memory(
                base, database, embedder, summarizer, expander, memory_context_max_chars=budget
            ),
            bench_memory(
                base,
                database,
                embedder,
                summarizer,
                expander,
                memory_context_max_chars=budget,
                memory_context_max_items=0,
            ),
        )
        for budget in budgets
    }
    return Setup(
        every,
        memory,
        recent_only,
        no_facts,
        database,
        rooms,
        int(calls),
        time.perf_counter() - started,
        swept,
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
        # Every turn embedded, as the server's jobs embed them (after each reply, or an import's
        # batches): a context build's own catch-up is bounded in time (1 s), so leaving it to
        # the builds would make the figures depend on how loaded the machine is.
        async with database.session() as session:
            await memory.context.indexer.index_missing(session, room_id=room.id)
        await _remember(memory, loaded, observed, message_id)
        await memory.summaries.catch_up(room.id)
        history = message.char_end
        dual = [await context_for(memory, loaded, q.text) for q in probes]
        recent = [await context_for(recent_only, loaded, q.text) for q in probes]
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


async def context_for(memory: Memory, loaded: LoadedRoom, question: str) -> DualContext:
    """As the chat path builds it: the question is the new message, asked after the last one."""
    return await memory.context.build(
        room=loaded.room,
        user=loaded.asker,
        query=question,
        now=loaded.last_time + timedelta(minutes=1),
    )
