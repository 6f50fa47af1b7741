"""Scripted lobby days on a fake clock: people talk from 8:00 to 22:00, the activity window
runs every 10 minutes (summary, then the opportunity path), the reflection every 3 hours, and
once a day 100 reflections are triggered at the same instant. Counted per simulated day: model
calls by purpose, interventions, passes, rate-limited, the smallest gap between interventions,
against the seed's budget (~200 calls a day) and rate limits (5 a day, 30 min apart)."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from eko.llm.providers import FunctionModel
from eko.store.lobby_models import Reflection
from eko.store.models import Message
from eko_bench.proactive_stack import KeywordModel, Stack, new_stack, open_database

START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=10)
PEOPLE = ("David", "Mickael", "Simon", "Lucie")
GOALS = [
    ("Kraken FM", "C'est quoi exactement Kraken FM ?"),
    ("Corentin", "Qui est Corentin ?"),
    ("plan Max", "C'est quoi le plan Max ?"),
    ("WebRTC", "Je veux mieux comprendre WebRTC"),
    ("vibe coding", "Je veux mieux comprendre le vibe coding"),
    ("lemapp", "Qu'est-ce que Mickael a mergé sur lemapp ?"),
]
FACTS = [
    ("village de maman", "Le village de maman est Besançon"),
    ("Corentin", "Corentin est dev chez lemlist"),
    ("réunion d'équipe", "La réunion d'équipe a lieu le mardi à 10h"),
]
CHATTER = [
    "il pleut encore",
    "on mange où ce midi ?",
    "je prends un café, quelqu'un en veut ?",
    "bien vu",
    "haha",
    "je suis en call jusqu'à 15h",
    "ok pour moi",
    "qui ferme ce soir ?",
    "bon courage à tous",
    "trop bien",
]
TOPICAL = [
    "je vais bosser sur Kraken FM cet aprem",
    "Corentin passe demain au bureau",
    "j'ai pris le plan Max finalement",
    "le souci de WebRTC est réglé",
    "c'était quoi le nom du village de maman ?",
    "la réunion d'équipe c'est quel jour déjà ?",
]


@dataclass
class Day:
    day: int
    messages: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    interventions: int = 0
    passes: int = 0
    rate_limited: int = 0
    min_gap_min: float | None = None

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


async def simulate(*, days: int, seed: int, directory: Path) -> list[Day]:
    rng = random.Random(seed)
    model = KeywordModel()
    database = await open_database(directory)
    try:
        stack = await new_stack(database, providers=[FunctionModel(model)], start=START)
        for subject, content in FACTS:
            await stack.remember("fact", subject, content)
        results = []
        for day in range(days):
            # New curiosities arrive every day (what memory extraction would add).
            for subject, content in GOALS[day % 2 :: 2]:
                await stack.remember("goal", f"{subject} {day}", content)
            before = dict(model.calls)
            stats = Day(day=day + 1)
            await _one_day(stack, rng, START + timedelta(days=day), stats)
            stats.calls = Counter(
                {k: v - before.get(k, 0) for k, v in model.calls.items() if v > before.get(k, 0)}
            )
            await _count(stack, START + timedelta(days=day), stats)
            results.append(stats)
        return results
    finally:
        await database.dispose()


async def _one_day(stack: Stack, rng: random.Random, midnight: datetime, stats: Day) -> None:
    burst_at = midnight + timedelta(hours=rng.randint(9, 20), minutes=rng.choice([5, 35]))
    arrivals = _arrivals(rng, midnight)
    stats.messages = len(arrivals)
    pending = iter(arrivals)
    upcoming = next(pending, None)
    now = midnight
    end = midnight + timedelta(days=1)
    while now < end:
        now += timedelta(minutes=5)
        stack.clock.now = now
        while upcoming is not None and upcoming[0] <= now:
            await stack.say(upcoming[1], upcoming[2], at=upcoming[0])
            upcoming = next(pending, None)
        if now.minute % 10 == 0:
            await stack.lobby.activity(stack.room.id)
        if now.minute == 0 and now.hour % 3 == 0:
            await stack.lobby.reflector.reflect(stack.room.id, trigger="scheduled")
        if now == burst_at:
            await asyncio.gather(
                *(stack.lobby.reflector.reflect(stack.room.id) for _ in range(100))
            )


def _arrivals(rng: random.Random, midnight: datetime) -> list[tuple[datetime, str, str]]:
    arrivals = []
    at = midnight + timedelta(hours=8)
    while at < midnight + timedelta(hours=22):
        at += timedelta(minutes=rng.expovariate(1 / 7))
        text = rng.choice(TOPICAL) if rng.random() < 0.15 else rng.choice(CHATTER)
        arrivals.append((at, rng.choice(PEOPLE), text))
    return arrivals


async def _count(stack: Stack, midnight: datetime, stats: Day) -> None:
    end = midnight + timedelta(days=1)
    async with stack.database.session() as session:
        reflections = (
            await session.execute(
                select(Reflection).where(
                    Reflection.room_id == stack.room.id,
                    Reflection.created_at >= midnight,
                    Reflection.created_at < end,
                )
            )
        ).scalars()
        posted = (
            await session.execute(
                select(Message.created_at)
                .where(
                    Message.room_id == stack.room.id,
                    Message.role == "assistant",
                    Message.created_at >= midnight,
                    Message.created_at < end,
                )
                .order_by(Message.created_at)
            )
        ).scalars()
        times = list(posted)
        for reflection in reflections:
            if reflection.action == "message":
                stats.interventions += 1
            elif reflection.rate_limited:
                stats.rate_limited += 1
            else:
                stats.passes += 1
    gaps = [(b - a).total_seconds() / 60 for a, b in itertools.pairwise(times)]
    stats.min_gap_min = min(gaps) if gaps else None
