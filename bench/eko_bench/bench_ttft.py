"""Time to first token with the configured (local) model: part of `eko bench pipeline`.

A fresh SQLite database, one pro user whose intro is done, one direct room. Each question is
posted through ChatService.post with a live reply (as POST …/messages with Server-Sent Events
does): the time to the first delta is what a person waits before seeing the reply being
written; the whole reply's time is what they waited before streaming existed. The first
message (model load, empty caches) is a warm-up, reported apart. Memory extraction and
summaries are off: no background call competes for the model.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table
from sqlalchemy import select

from eko.chat.streaming import LiveReply
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.types import Provider
from eko.store import chat_profile
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.models import LLMCall
from eko.wiring import build_services
from eko_bench.databases import fresh_database

QUESTIONS = [
    "Bonjour ! Peux-tu m'expliquer ce qu'est une API en deux phrases ?",
    "What is a good way to start learning to cook?",
    "Donne-moi une idée de sortie pour un dimanche pluvieux.",
    "How do I politely decline a meeting invitation?",
]
FACTS = {"first_name": "Bench", "use_tu_form": True, "main_city": "Lyon", "main_activity": "QA"}


@dataclass
class Sample:
    ttft_s: float | None
    total_s: float
    orchestrator_s: float
    deltas: int
    chars: int
    source: str = "model"  # or the fallback reason


@dataclass
class TTFT:
    provider: str
    load_s: float = 0.0
    warmup: Sample | None = None
    samples: list[Sample] = field(default_factory=list)


async def measure(
    settings: Settings, *, messages: int = 3, providers: Sequence[Provider] | None = None
) -> TTFT:
    async with fresh_database("sqlite") as database:
        run_settings = settings.model_copy(
            update={
                "database_url": database.url,
                "memory_extract_enabled": False,
                "summaries_enabled": False,
            }
        )
        services = build_services(
            run_settings, providers=providers, embedder=HashEmbedder(), database=database
        )
        result = TTFT(provider=", ".join(p.name for p in services.runtime.providers))
        try:
            loading = time.perf_counter()
            for provider in services.runtime.providers:
                load = getattr(provider, "load", None)
                if load is not None:  # a local model: loaded before the clock starts
                    await load()
            result.load_s = time.perf_counter() - loading
            async with database.session() as session:
                user, _ = await user_repo.create_user(session, display_name="bench", is_pro=True)
                for key, value in FACTS.items():
                    await chat_profile.upsert_fact(
                        session, user_id=user.id, fact_key=key, value=value
                    )
                room = await room_repo.create_room(
                    session, kind="direct", name="ttft", persona="eko", created_by=user.id
                )
            for i in range(messages + 1):
                first: list[float] = []
                count: list[int] = []

                def on_delta(
                    _index: int, _text: str, first: list[float] = first, count: list[int] = count
                ) -> None:
                    count.append(1)
                    if not first:
                        first.append(time.perf_counter())

                started = time.perf_counter()
                exchange = await services.chat.post(
                    user=user,
                    room=room,
                    content=QUESTIONS[i % len(QUESTIONS)],
                    live=LiveReply(on_delta=on_delta),
                )
                total = time.perf_counter() - started
                async with database.session() as session:
                    calls = (
                        await session.execute(
                            select(LLMCall).where(
                                LLMCall.message_id == exchange.user_message.id,
                                LLMCall.purpose == "orchestrator",
                            )
                        )
                    ).scalars()
                    orchestrator_s = sum(c.duration_ms for c in calls) / 1000.0
                reply = exchange.assistant_message
                sample = Sample(
                    ttft_s=first[0] - started if first else None,
                    total_s=total,
                    orchestrator_s=orchestrator_s,
                    deltas=len(count),
                    chars=len(reply.content) if reply is not None else 0,
                    source=str((reply.meta or {}).get("fallback") or "model")
                    if reply is not None
                    else "none",
                )
                if i == 0:
                    result.warmup = sample
                else:
                    result.samples.append(sample)
        finally:
            await services.aclose()
    return result


def table(result: TTFT) -> Table:
    table = Table(
        title=f"Time to first token, streamed replies ({result.provider}, "
        f"loaded in {result.load_s:.1f} s)"
    )
    for column in (
        "message",
        "first token s",
        "whole reply s",
        "orchestrator s",
        "deltas",
        "answer",
    ):
        table.add_column(column, justify="left" if column == "message" else "right")
    rows = [("warm-up", result.warmup)] if result.warmup else []
    rows += [(f"#{n}", s) for n, s in enumerate(result.samples, 1)]
    for name, sample in rows:
        assert sample is not None
        table.add_row(
            name,
            f"{sample.ttft_s:.2f}" if sample.ttft_s is not None else "-",
            f"{sample.total_s:.2f}",
            f"{sample.orchestrator_s:.2f}",
            str(sample.deltas),
            sample.source,
        )
    firsts = [s.ttft_s for s in result.samples if s.ttft_s is not None]
    if firsts:
        table.add_row(
            "median",
            f"{statistics.median(firsts):.2f}",
            f"{statistics.median(s.total_s for s in result.samples):.2f}",
            f"{statistics.median(s.orchestrator_s for s in result.samples):.2f}",
            "",
            "",
        )
    table.caption = (
        "first token = from posting to the first delta of the reply (storing, orchestrator "
        "call, plan, the writer's prompt); whole reply = until it is stored."
    )
    return table


async def run(*, settings: Settings, console: Console, messages: int = 3) -> None:
    with console.status("time to first token with the configured model…"):
        result = await measure(settings, messages=messages)
    console.print(table(result))


if __name__ == "__main__":
    import asyncio

    asyncio.run(run(settings=Settings(), console=Console()))
