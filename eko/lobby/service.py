"""The lobby's proactive side as one object the composition root builds: summarizer,
reflector, opportunity path, live phases, the manual trigger's limit; and its periodic jobs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import select

from eko.config import LobbySettings, Settings
from eko.embed.base import Embedder
from eko.events.types import EventBus
from eko.jobs.registry import JobDefinition, JobRegistry
from eko.llm.runtime import LLMRuntime
from eko.lobby.activity import ActivitySummarizer
from eko.lobby.live import LivePhases
from eko.lobby.manual import ManualTriggerLimit
from eko.lobby.opportunity import OpportunityEvaluator
from eko.lobby.reflection import Reflector
from eko.memory.items import MemoryItems
from eko.memory.relevance import item_min_score
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary, Reflection
from eko.store.models import Room, utcnow

log = structlog.get_logger("eko.lobby")

ACTIVITY_TICK = "lobby.activity_tick"
ACTIVITY = "lobby.activity"
REFLECT_TICK = "lobby.reflect_tick"
REFLECT = "lobby.reflect"

Enqueue = Callable[..., Awaitable[int | None]]


@dataclass(frozen=True, slots=True)
class Activity:
    """What one activity window did: its summary (None: nobody spoke since the last one) and
    the reflection recorded when the opportunity path claimed a slot (None: nothing worth
    saying)."""

    summary: ActivitySummary | None
    reflection: Reflection | None


@dataclass
class Lobby:
    database: Database
    summarizer: ActivitySummarizer
    reflector: Reflector
    opportunity: OpportunityEvaluator
    live: LivePhases
    manual: ManualTriggerLimit  # the manual trigger's limit per user

    async def lobby_ids(self) -> Sequence[str]:
        async with self.database.session() as session:
            rows = await session.execute(select(Room.id).where(Room.kind == "lobby"))
            return list(rows.scalars())

    async def activity(self, room_id: str) -> Activity:
        """One activity window of one lobby: summary, then the opportunity path."""
        summary = await self.summarizer.summarize(room_id)
        if summary is None:
            return Activity(None, None)
        return Activity(summary, await self.opportunity.evaluate(summary))

    def register(self, registry: JobRegistry, *, settings: LobbySettings, enqueue: Enqueue) -> None:
        """Periodic ticks (once per window across workers) fan out one job per lobby."""

        async def activity_tick(_args: dict[str, Any]) -> None:
            for room_id in await self.lobby_ids():
                await enqueue(ACTIVITY, {"room_id": room_id}, queueing_lock=f"{ACTIVITY}:{room_id}")

        async def reflect_tick(_args: dict[str, Any]) -> None:
            for room_id in await self.lobby_ids():
                await enqueue(REFLECT, {"room_id": room_id}, queueing_lock=f"{REFLECT}:{room_id}")

        async def activity(args: dict[str, Any]) -> None:
            await self.activity(str(args["room_id"]))

        async def reflect(args: dict[str, Any]) -> None:
            await self.reflector.reflect(str(args["room_id"]), trigger="scheduled")

        registry.register(JobDefinition(ACTIVITY_TICK, activity_tick, max_attempts=3))
        registry.register(JobDefinition(REFLECT_TICK, reflect_tick, max_attempts=3))
        registry.register(JobDefinition(ACTIVITY, activity, max_attempts=3, uses_model=True))
        registry.register(JobDefinition(REFLECT, reflect, max_attempts=3, uses_model=True))
        if settings.lobby_proactive_enabled:
            registry.every(ACTIVITY_TICK, job=ACTIVITY_TICK, cron=settings.activity_summary_cron)
            registry.every(REFLECT_TICK, job=REFLECT_TICK, cron=settings.reflection_cron)


def build_lobby(
    *,
    settings: Settings,
    database: Database,
    runtime: LLMRuntime,
    items: MemoryItems,
    embedder: Embedder,
    prompts: PromptLibrary,
    events: EventBus | None,
    clock: Callable[[], datetime] = utcnow,
) -> Lobby:
    live = LivePhases(events)
    reflector = Reflector(
        database=database,
        runtime=runtime,
        items=items,
        prompts=prompts,
        settings=settings,
        live=live,
        events=events,
        clock=clock,
    )
    return Lobby(
        database=database,
        summarizer=ActivitySummarizer(
            database=database, runtime=runtime, prompts=prompts, settings=settings, clock=clock
        ),
        reflector=reflector,
        opportunity=OpportunityEvaluator(
            database=database,
            runtime=runtime,
            items=items,
            prompts=prompts,
            settings=settings,
            reflector=reflector,
            candidate_min_score=item_min_score(settings, embedder),
            by_rules=settings.lobby_decides_by_rules(primary_is_small=runtime.primary_is_small),
            clock=clock,
        ),
        live=live,
        manual=ManualTriggerLimit(
            database, interval_s=settings.reflection_manual_interval_s, clock=clock
        ),
    )
