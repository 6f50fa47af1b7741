"""The opportunity path (the seed's decision 1, step 2): after each activity summary, is there
something worth saying now? A curiosity about what people are discussing, or a stored fact that
answers a question just asked ("Besançon, non ?"). A strict threshold (seed decision 2) decides
message vs pass.

No model call when the last message is the assistant's, when no goal or fact is near enough to
what is being said, or when the rate limits refuse a slot (claimed before the call, so the
opportunity path and the scheduled reflection share the same limits).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

import structlog

from eko.config import Settings
from eko.llm.runtime import LLMRuntime
from eko.lobby import context, store
from eko.lobby.decision_call import ask_decision
from eko.lobby.mentions import persona_name
from eko.lobby.outputs import OpportunityDecision
from eko.lobby.reflection import Reflector
from eko.memory.items import ItemHit, MemoryItems
from eko.memory.scopes import room_key
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary, Reflection
from eko.store.models import utcnow

log = structlog.get_logger("eko.lobby")

PURPOSE = "reflection_opportunity"
CANDIDATES = 5


class OpportunityEvaluator:
    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        items: MemoryItems,
        prompts: PromptLibrary,
        settings: Settings,
        reflector: Reflector,
        candidate_min_score: float,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._items = items
        self._prompts = prompts
        self._settings = settings
        self._reflector = reflector
        self._min_score = candidate_min_score
        self._clock = clock

    async def evaluate(self, summary: ActivitySummary) -> Reflection | None:
        """A recorded reflection when the model was asked (or the limits refused it), None when
        nothing made it worth asking."""
        started = time.perf_counter()
        room = await self._reflector.room(summary.room_id)
        last = await self._reflector.last_message(room.id)
        if last is None or last.role == "assistant":
            return None
        name = persona_name(room, self._settings)
        lines = await context.lobby_lines(
            self._database,
            room_id=room.id,
            assistant_name=name,
            limit=self._settings.reflection_recent_messages,
        )
        now_talk = " ".join([summary.summary] + [line.message.content for line in lines[-5:]])
        goals = await self._near(room.id, now_talk, kind="goal", keys=[room_key(room.id)])
        facts = await self._near(room.id, now_talk, kind="fact", keys=context.lobby_keys(room.id))
        if not goals and not facts:
            return None
        now = self._clock()
        await self._reflector.settle(room.id, now)
        reflection = self._reflector.new_reflection(
            room.id, trigger="opportunity", forced=False, now=now
        )
        reflection.activity_summary = summary.summary
        reflection.goals_count, reflection.facts_count = len(goals), len(facts)
        token = await store.claim_slot(
            self._database, room_id=room.id, now=now, limits=self._reflector.limits
        )
        if token is None:
            reflection.rate_limited = True
            return await self._reflector.finish(reflection, started, skipped="rate_limited")
        try:
            hint = context.tone_hint([line.message.content for line in lines])
            reflection.meta = {"tone_hint": hint}
            prompt = self._prompts.text("lobby/opportunity.md").format(
                name=name,
                summary=summary.summary,
                messages=context.render_lines(lines),
                goals="\n".join(f"{n}. {hit.item.content}" for n, hit in enumerate(goals, start=1))
                or "(aucune)",
                facts=context.render_hits(facts),
                tone_hint=hint,
            )
            decision = await self._decide(reflection, prompt)
            threshold = self._settings.reflection_opportunity_min_confidence
            if (
                decision is None
                or decision.action != "message"
                or not decision.message.strip()
                or decision.confidence < threshold
            ):
                if decision is not None and decision.action == "message":
                    reflection.reason = (
                        f"below the threshold ({decision.confidence:.2f} < {threshold:.2f}): "
                        + reflection.reason
                    )
                return await self._reflector.finish(reflection, started)
            goal_id = None
            if 1 <= decision.goal <= len(goals):
                goal_id = goals[decision.goal - 1].item.id
            reflection.goal_id = goal_id
            reflection.tone = decision.tone or hint
            posted = await self._reflector.post(room.id, reflection, decision.message.strip())
            if goal_id is not None:
                await self._items.mark_asked(goal_id)
            await store.confirm_slot(
                self._database,
                room_id=room.id,
                now=now,
                goal_id=goal_id,
                message_id=posted.message.id,
            )
            token = None
            return await self._reflector.finish(reflection, started)
        finally:
            if token is not None:
                await store.release_slot(
                    self._database, room_id=room.id, token=token, now=self._clock()
                )

    async def _near(self, room_id: str, text: str, *, kind: str, keys: list[str]) -> list[ItemHit]:
        statuses = ["open"] if kind == "goal" else None
        return await self._items.search(
            keys=keys,
            query=text,
            kinds=[kind],
            statuses=statuses,
            k=CANDIDATES,
            min_score=self._min_score,
        )

    async def _decide(self, reflection: Reflection, prompt: str) -> OpportunityDecision | None:
        decision = await ask_decision(
            self._runtime, reflection, prompt, output=OpportunityDecision, purpose=PURPOSE
        )
        if decision is not None:
            reflection.meta = {**reflection.meta, "confidence": decision.confidence}
        return decision
