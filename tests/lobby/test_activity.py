"""Activity summaries, the opportunity path after them, and the periodic jobs."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from eko.jobs.registry import JobRegistry
from eko.llm.types import ProviderRequest
from eko.lobby.service import ACTIVITY, ACTIVITY_TICK, REFLECT_TICK, Lobby
from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary
from eko.store.models import LLMCall
from tests.lobby.kit import LobbyKit, make_lobby_kit


class LobbyModel:
    """Summaries and opportunity decisions, scripted; every call counted by schema."""

    def __init__(self, *, confidence: float = 0.9, action: str = "message") -> None:
        self.confidence = confidence
        self.action = action
        self.calls: dict[str, int] = {}

    def __call__(self, request: ProviderRequest) -> str:
        title = str((request.json_schema or {}).get("title", ""))
        self.calls[title] = self.calls.get(title, 0) + 1
        if title == "SummaryOutput":
            return json.dumps({"summary": "On parle du village de maman."})
        return json.dumps(
            {
                "action": self.action,
                "message": "Besançon, non ? Enfin c'est ce que user0 avait dit.",
                "reason": "un fait répond à la question",
                "tone": "helpful",
                "confidence": self.confidence,
                "goal": 0,
            }
        )


async def kit_with(database: Database, model: LobbyModel) -> tuple[LobbyKit, Lobby]:
    kit = await make_lobby_kit(database, model=model)
    return kit, kit.lobby()


async def test_a_summary_per_window_with_activity_and_no_call_without(database: Database) -> None:
    model = LobbyModel()
    kit, lobby = await kit_with(database, model)
    assert await lobby.summarizer.summarize(kit.room.id) is None
    await kit.say("c'était quoi le nom du village de maman ?", user=1)
    await kit.say("aucune idée", user=0)
    summary = await lobby.summarizer.summarize(kit.room.id)
    assert summary is not None
    assert (summary.message_count, summary.participants) == (2, ["user0", "user1"])
    assert summary.summary == "On parle du village de maman."
    assert await lobby.summarizer.summarize(kit.room.id) is None  # nothing new
    await kit.say("je reviens", role="assistant")
    assert await lobby.summarizer.summarize(kit.room.id) is None  # only the assistant spoke
    assert model.calls == {"SummaryOutput": 1}
    async with database.session() as session:
        count = (await session.execute(select(func.count()).select_from(ActivitySummary))).scalar()
        purposes = (await session.execute(select(LLMCall.purpose))).scalars().all()
    assert count == 1 and purposes == ["activity_summary"]


async def test_a_stored_fact_answers_a_question_just_asked(database: Database) -> None:
    model = LobbyModel(confidence=0.92)
    kit, lobby = await kit_with(database, model)
    await kit.remember("fact", "village de maman", "Le village de maman est Besançon")
    await kit.say("c'était quoi le nom du village de maman ?", user=1)
    await lobby.activity(kit.room.id)
    reflection = await lobby.reflector.last_message(kit.room.id)
    assert reflection is not None and reflection.role == "assistant"
    assert reflection.content.startswith("Besançon, non ?")
    assert model.calls == {"SummaryOutput": 1, "OpportunityDecision": 1}


async def test_below_the_threshold_is_a_pass_and_nothing_near_is_no_call(
    database: Database,
) -> None:
    model = LobbyModel(confidence=0.6)
    kit, lobby = await kit_with(database, model)
    await kit.remember("fact", "village de maman", "Le village de maman est Besançon")
    await kit.say("c'était quoi le nom du village de maman ?", user=1)
    summary = await lobby.summarizer.summarize(kit.room.id)
    assert summary is not None
    reflection = await lobby.opportunity.evaluate(summary)
    assert reflection is not None and reflection.action == "pass"
    assert reflection.reason.startswith("below the threshold")
    last = await lobby.reflector.last_message(kit.room.id)
    assert last is not None and last.role == "user"

    # Another lobby: the first lobby's fact is not its memory, and it has none of its own.
    other_model = LobbyModel()
    other, other_lobby = await kit_with(database, other_model)
    await other.say("c'était quoi le nom du village de maman ?", user=1)
    other_summary = await other_lobby.summarizer.summarize(other.room.id)
    assert other_summary is not None
    assert await other_lobby.opportunity.evaluate(other_summary) is None
    assert other_model.calls == {"SummaryOutput": 1}


async def test_ticks_fan_out_one_job_per_lobby(database: Database) -> None:
    kit, lobby = await kit_with(database, LobbyModel())
    second, _ = await kit_with(database, LobbyModel())
    registry = JobRegistry()
    enqueued: list[tuple[str, dict[str, Any], str | None]] = []

    async def enqueue(name: str, args: dict[str, Any], *, queueing_lock: str | None = None) -> int:
        enqueued.append((name, args, queueing_lock))
        return len(enqueued)

    lobby.register(registry, settings=kit.settings, enqueue=enqueue)
    assert {s.name for s in registry.schedules} >= {ACTIVITY_TICK, REFLECT_TICK}
    await registry.get(ACTIVITY_TICK).handler({})
    assert sorted(args["room_id"] for _n, args, _l in enqueued) == sorted(
        [kit.room.id, second.room.id]
    )
    assert all(
        name == ACTIVITY and lock == f"{ACTIVITY}:{args['room_id']}"
        for name, args, lock in enqueued
    )
