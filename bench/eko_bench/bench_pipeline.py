"""The chat pipeline's own cost per message, model time excluded, on SQLite and PostgreSQL.

Set-up per backend (a fresh database): one pro user whose intro is done, one direct room holding
10,000 messages of history (bulk insert, then its turns indexed as the after-reply job indexes
a live room's, so memory's dense recall searches all 10,000), and a docs scope of 1,000 chunks
(ingested through DocsService with the hash embedder); on PostgreSQL, ANALYZE then, as
autovacuum would after such a load. The model is a zero-latency scripted FunctionModel that
routes every message to the docs scope, so each message runs the full plan: context (A), quota
(B), docs chunks (S), the memory node when registered, and the writer (D).

Each message goes through ChatService.post, as the API does: store the user message (quota
count), short-circuits (quota paywall, memory guard lookup), the engine (context loader,
orchestrator call + guardrails, plan, executor, answer-only lock), store the reply. Overhead =
wall time − the model time recorded in llm_calls for that message. Background work (after-reply
hooks) is drained outside the timing; memory extraction and summaries are off (each would add
its own model calls after the reply). The SQL statements and transactions each timed message
ran are counted too (eko_bench/sql_counter.py): unlike the times, they do not move with the
machine's load.

Then, with the configured model (the local one by default), the time to the first token of a
streamed reply against the whole reply's time (bench/eko_bench/bench_ttft.py).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table
from sqlalchemy import func, insert, select, text

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store import chat_profile
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import LLMCall, Message, utcnow
from eko.wiring import build_services
from eko_bench import bench_ttft
from eko_bench.databases import fresh_database
from eko_bench.sql_counter import SqlCounter

HISTORY = 10_000
DOC_CHUNKS = 1_000
WARMUP = 10
MESSAGES = 200
# Per backend: stop measuring early rather than run for minutes on a slow machine.
BUDGET_S = 60.0
SCOPE = "bench"
ROUTE = (
    '{"confidence": 0.9, "decision": "route", "notes": "bench", "payload": {"intent": '
    '"general_question", "context_level": "light", "need_web": false, "web_search_prompt": "", '
    f'"scope_need": true, "scopes_selected": ["{SCOPE}"]}}}}'
)
FACTS = {"first_name": "Bench", "use_tu_form": True, "main_city": "Lyon", "main_activity": "QA"}
QUESTIONS = [
    "How do I export my data to a spreadsheet?",
    "Quel est le délai de remboursement ?",
    "Can I share a room with my team?",
    "Comment changer mon mot de passe ?",
]


@dataclass
class Row:
    backend: str
    overhead_ms: list[float] = field(default_factory=list)
    model_ms: list[float] = field(default_factory=list)
    calls: int = 0
    nodes_ms: dict[str, list[float]] = field(default_factory=dict)
    engine_ms: list[float] = field(default_factory=list)
    load_s: float = 0.0
    # SQL statements and transactions per timed message (deterministic, unlike the times).
    statements: list[int] = field(default_factory=list)
    transactions: list[int] = field(default_factory=list)


def _model() -> FunctionModel:
    def answer(request: ProviderRequest) -> str:
        return ROUTE if request.json_schema is not None else "Voici la réponse."

    return FunctionModel(answer, name="zero-latency")


async def _load(database: Database, settings: Settings) -> tuple[Any, Any, Any]:
    services = build_services(
        settings, providers=[_model()], embedder=HashEmbedder(), database=database
    )
    async with database.session() as session:
        user, _ = await user_repo.create_user(session, display_name="bench", is_pro=True)
        for key, value in FACTS.items():
            await chat_profile.upsert_fact(session, user_id=user.id, fact_key=key, value=value)
        room = await room_repo.create_room(
            session, kind="direct", name="bench", persona="eko", created_by=user.id
        )
    now, char_end = utcnow(), 0
    rows = []
    for seq in range(1, HISTORY + 1):
        role = "user" if seq % 2 else "assistant"
        content = f"{role} message {seq}: " + "lorem ipsum dolor sit amet " * 3
        char_end += len(content)
        rows.append(
            {
                "id": f"h{seq:031d}",
                "room_id": room.id,
                "seq": seq,
                "sender_id": user.id if role == "user" else None,
                "role": role,
                "type": "message",
                "content": content,
                "meta": {},
                "char_count": len(content),
                "char_end": char_end,
                "dedupe_key": f"bench:{seq}",
                "created_at": now,
            }
        )
    for start in range(0, len(rows), 1000):
        async with database.session() as session:
            await session.execute(insert(Message), rows[start : start + 1000])
    sections = "\n\n".join(
        f"## Topic {i}\n\nAnswer {i}: the setting {i} lives under menu {i % 17} and takes "
        f"{i % 9 + 1} steps to change; see also topic {(i * 7) % DOC_CHUNKS}."
        for i in range(DOC_CHUNKS)
    )
    result = await services.engine.docs.ingest(scope=SCOPE, source="bench.md", text=sections)
    assert result.chunks == DOC_CHUNKS, result
    # A live room's turns are indexed as they arrive (the after-reply job): the history's too,
    # so memory's dense recall searches 10,000 turns, as it would, not the few caught up.
    async with database.session() as session:
        indexed = await services.memory.context.turns.reindex(session, room_id=room.id)
    assert indexed == HISTORY, indexed
    if database.dialect == "postgresql":
        # What autovacuum does within a minute of such a load on a live server: without the
        # statistics, the planner took the room's index over the words' GIN index and the
        # full-text search read every turn of the room, 60-120 ms a message.
        async with database.session() as session:
            await session.execute(text("ANALYZE"))
    return services, user, room


async def _measure(backend: str) -> Row:
    row = Row(backend)
    async with fresh_database(backend) as database:
        settings = Settings(
            database_url=database.url,
            memory_extract_enabled=False,
            summaries_enabled=False,
            docs_chunk_chars=400,
            # After-reply jobs run when drained, between messages: on SQLite the in-process
            # worker would start them as they are enqueued, inside the timed post (claims,
            # then the turn index's embedding and writes). PostgreSQL's queue never did.
            jobs_worker_in_process=False,
            _env_file=None,
        )
        started = time.perf_counter()
        services, user, room = await _load(database, settings)
        row.load_s = time.perf_counter() - started
        counter = SqlCounter(database)
        try:
            deadline = time.perf_counter() + BUDGET_S
            for i in range(WARMUP + MESSAGES):
                text = f"{QUESTIONS[i % len(QUESTIONS)]} ({i})"
                with counter.counting() as count:
                    began = time.perf_counter()
                    exchange = await services.chat.post(user=user, room=room, content=text)
                    wall_ms = (time.perf_counter() - began) * 1000.0
                await services.jobs.drain()
                if i < WARMUP:
                    continue
                row.statements.append(count.statements)
                row.transactions.append(count.transactions)
                async with database.session() as session:
                    model_ms, calls = (
                        await session.execute(
                            select(
                                func.coalesce(func.sum(LLMCall.duration_ms), 0.0), func.count()
                            ).where(LLMCall.message_id == exchange.user_message.id)
                        )
                    ).one()
                row.overhead_ms.append(wall_ms - float(model_ms))
                row.model_ms.append(float(model_ms))
                row.calls += int(calls)
                reply = exchange.assistant_message
                assert reply is not None and reply.type == "message", reply
                engine_ms = float(reply.meta["engine"]["duration_ms"]) - float(model_ms)
                row.engine_ms.append(engine_ms)
                for node_id, node in ((reply.meta or {}).get("nodes") or {}).items():
                    row.nodes_ms.setdefault(node_id, []).append(float(node["duration_ms"]))
                if time.perf_counter() > deadline:
                    break
        finally:
            counter.close()
            await services.aclose()
    return row


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _table(rows: list[Row]) -> Table:
    table = Table(
        title=f"Chat pipeline overhead per message ({HISTORY:,} messages of history, "
        f"{DOC_CHUNKS:,} docs chunks, zero-latency model)"
    )
    for column in (
        "backend",
        "messages",
        "p50 ms",
        "p95 ms",
        "mean ms",
        "engine p50 ms",
        "model calls/msg",
        "SQL statements/msg",
        "transactions/msg",
        "node p50 ms (A/B/S/M/D)",
        "set-up s",
    ):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for row in rows:
        n = len(row.overhead_ms)
        nodes = "/".join(
            f"{statistics.median(row.nodes_ms[i]):.1f}" if row.nodes_ms.get(i) else "-"
            for i in ("A", "B", "S", "M", "D")
        )
        table.add_row(
            row.backend,
            str(n),
            f"{_pct(row.overhead_ms, 0.5):.1f}",
            f"{_pct(row.overhead_ms, 0.95):.1f}",
            f"{statistics.fmean(row.overhead_ms):.1f}",
            f"{_pct(row.engine_ms, 0.5):.1f}",
            f"{row.calls / n:.2f}",
            f"{statistics.fmean(row.statements):.1f}",
            f"{statistics.fmean(row.transactions):.1f}",
            nodes,
            f"{row.load_s:.1f}",
        )
    table.caption = (
        "overhead = wall time of ChatService.post minus recorded model time; engine = the "
        "ChatEngine.write part of it (context, orchestrator, plan, nodes, answer lock). Node "
        "times overlap (A, B, S and M run concurrently); D includes the writer's model call."
    )
    return table


async def run(*, settings: Settings, console: Console) -> None:
    rows = []
    for backend in ("sqlite", "postgres"):
        with console.status(f"pipeline bench on {backend}…"):
            rows.append(await _measure(backend))
    console.print(_table(rows))
    # With the configured (local) model: how soon a streamed reply starts (bench_ttft.py).
    await bench_ttft.run(settings=settings, console=console)


if __name__ == "__main__":
    asyncio.run(run(settings=Settings(), console=Console()))
