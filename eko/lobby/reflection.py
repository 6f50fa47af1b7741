"""The reflection (seed reactive-eko): the assistant poses one of its curiosities in a lobby.

Flow: skip with zero model calls when the lobby's last message is the assistant's (unless
forced) → settle the previous question (answered: cooldown reset; ignored: doubled) → claim an
intervention slot (the atomic rate limits; a manual trigger bypasses them and is not counted
in the day's budget) → pick the most
recent open goal, drop its duplicates → search facts and self around it, read the recent
lobby → the directive prompt → JSON {action, message, reason, tone} → post the message as the
assistant, mark the goal asked → store the reflection and the stats, publish events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import structlog
from sqlalchemy import select

from eko.config import Settings
from eko.events.payloads import message_created
from eko.events.types import EventBus
from eko.llm.runtime import LLMRuntime
from eko.lobby import context, store
from eko.lobby.decision_call import ask_decision
from eko.lobby.live import LivePhases
from eko.lobby.mentions import persona_name
from eko.lobby.outputs import ReflectionDecision
from eko.memory.items import MemoryItems
from eko.memory.scopes import room_key
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.lobby_models import Reflection
from eko.store.memory_models import MemoryItem
from eko.store.models import Message, Room, new_id, utcnow

log = structlog.get_logger("eko.lobby")

PURPOSE = "reflection"
GOALS_CONSIDERED = 50


class NotALobby(ValueError):
    pass


def limits_of(settings: Settings) -> store.Limits:
    return store.Limits(
        cooldown_s=settings.reflection_cooldown_s,
        cooldown_max_s=max(settings.reflection_cooldown_max_s, settings.reflection_cooldown_s),
        max_per_day=settings.reflection_max_per_day,
        answer_window_s=settings.reflection_answer_window_s,
    )


@dataclass(frozen=True, slots=True)
class Posted:
    message: Message
    created: bool


class Reflector:
    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        items: MemoryItems,
        prompts: PromptLibrary,
        settings: Settings,
        live: LivePhases,
        events: EventBus | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._items = items
        self._prompts = prompts
        self._settings = settings
        self.live = live
        self._events = events
        self._clock = clock
        self.limits = limits_of(settings)

    async def room(self, room_id: str) -> Room:
        async with self._database.session() as session:
            room = await session.get(Room, room_id)
        if room is None or room.kind != "lobby":
            raise NotALobby(f"room {room_id} is not a lobby")
        return room

    async def reflect(
        self,
        room_id: str,
        *,
        trigger: str = "scheduled",
        force: bool = False,
        by: str | None = None,
    ) -> Reflection:
        """One reflection. trigger="manual" bypasses the rate limits (and is not counted in the
        day's budget); `force` also bypasses the skip when the last message is the assistant's.
        `by`: the public id of the user who triggered it by hand (eko.lobby.manual)."""
        started = time.perf_counter()
        room = await self.room(room_id)
        now = self._clock()
        await self.live.enter(room_id, "gathering", at=now, trigger=trigger)
        reflection = self.new_reflection(room_id, trigger=trigger, forced=force, now=now)
        if by is not None:
            reflection.meta = {store.TRIGGERED_BY: by}
        token: str | None = None
        try:
            # No model call: settle the previous question first (answered → cooldown reset).
            await self.settle(room_id, now)
            last = await self.last_message(room_id)
            if last is not None and last.role == "assistant" and not force:
                return await self.finish(reflection, started, skipped="last_message_is_assistant")
            token = await store.claim_slot(
                self._database,
                room_id=room_id,
                now=now,
                limits=self.limits,
                bypass=trigger == "manual",
            )
            if token is None and trigger == "manual":
                # Bypassing the limits still waits for a reflection already in flight.
                return await self.finish(reflection, started, skipped="in_progress")
            if token is None:
                reflection.rate_limited = True
                return await self.finish(reflection, started, skipped="rate_limited")
            goals = await self._items.list_items(
                keys=[room_key(room_id)], kind="goal", status="open", limit=GOALS_CONSIDERED
            )
            reflection.goals_count = len(goals)
            if not goals:
                return await self.finish(reflection, started, skipped="no_goal")
            goal = goals[0]
            reflection.goal_id = goal.id
            reflection.duplicate_goal_ids = await self._drop_duplicates(goal, goals[1:])
            await self.live.enter(room_id, "context", at=self._clock(), trigger=trigger)
            prompt, facts_count, hint = await self._prompt(room, goal)
            reflection.facts_count = facts_count
            reflection.meta = {**reflection.meta, "tone_hint": hint}
            await self.live.enter(room_id, "thinking", at=self._clock(), trigger=trigger)
            decision = await self._decide(reflection, prompt)
            if decision is None or decision.action != "message" or not decision.message.strip():
                return await self.finish(reflection, started)
            reflection.tone = decision.tone or hint
            posted = await self.post(room_id, reflection, decision.message.strip())
            await self._items.mark_asked(goal.id)
            await store.confirm_slot(
                self._database,
                room_id=room_id,
                now=now,
                goal_id=goal.id,
                message_id=posted.message.id,
            )
            token = None
            return await self.finish(reflection, started)
        finally:
            if token is not None:  # claimed but not used: give the slot back
                await store.release_slot(
                    self._database,
                    room_id=room_id,
                    token=token,
                    now=self._clock(),
                    counted=trigger != "manual",
                )

    def new_reflection(
        self, room_id: str, *, trigger: str, forced: bool, now: datetime
    ) -> Reflection:
        return Reflection(
            id=new_id(),
            room_id=room_id,
            trigger=trigger,
            forced=forced,
            action="pass",
            reason="",
            duplicate_goal_ids=[],
            goals_count=0,
            facts_count=0,
            llm_tokens=0,
            model_calls=0,
            rate_limited=False,
            meta={},
            created_at=now,
        )

    async def last_message(self, room_id: str) -> Message | None:
        async with self._database.session() as session:
            result = await session.execute(
                select(Message)
                .where(Message.room_id == room_id)
                .order_by(Message.seq.desc())
                .limit(1)
            )
            return result.scalars().first()

    async def settle(self, room_id: str, now: datetime) -> None:
        async with self._database.session() as session:
            stats = await store.get_stats(session, room_id=room_id)
        if stats is None or stats.pending_goal_id is None:
            return
        goal = await self._items.get(stats.pending_goal_id)
        if goal is None or goal.status == "answered":
            await store.question_answered(
                self._database,
                room_id=room_id,
                goal_id=stats.pending_goal_id,
                now=now,
                limits=self.limits,
            )
            return
        await store.settle_ignored_question(
            self._database, room_id=room_id, now=now, limits=self.limits
        )

    async def _drop_duplicates(self, goal: MemoryItem, others: list[MemoryItem]) -> list[str]:
        """Open goals that ask the same thing as `goal` (same subject, or as similar as the
        memory's dedup threshold) are removed."""
        duplicates = {other.id for other in others if other.subject_key == goal.subject_key}
        hits = await self._items.search(
            keys=[goal.scope],
            query=goal.content,
            kinds=["goal"],
            statuses=["open"],
            k=10,
            min_score=self._items.dedup_min_score,
        )
        duplicates |= {hit.item.id for hit in hits if hit.item.id != goal.id}
        for goal_id in sorted(duplicates):
            await self._items.delete(goal_id)
        if duplicates:
            log.info("lobby.reflection.duplicates_removed", goal_id=goal.id, count=len(duplicates))
        return sorted(duplicates)

    async def _prompt(self, room: Room, goal: MemoryItem) -> tuple[str, int, str]:
        k = self._settings.reflection_search_k
        facts = await context.around(
            self._items, room_id=room.id, query=goal.content, kind="fact", k=k
        )
        selves = await context.around(
            self._items, room_id=room.id, query=goal.content, kind="self", k=k
        )
        name = persona_name(room, self._settings)
        lines = await context.lobby_lines(
            self._database,
            room_id=room.id,
            assistant_name=name,
            limit=self._settings.reflection_recent_messages,
        )
        hint = context.tone_hint([line.message.content for line in lines] + [goal.content])
        text = self._prompts.text("lobby/reflection.md").format(
            name=name,
            goal=goal.content,
            facts=context.render_hits(facts),
            self=context.render_hits(selves),
            messages=context.render_lines(lines),
            tone_hint=hint,
        )
        return text, len(facts), hint

    async def _decide(self, reflection: Reflection, prompt: str) -> ReflectionDecision | None:
        return await ask_decision(
            self._runtime, reflection, prompt, output=ReflectionDecision, purpose=PURPOSE
        )

    async def post(self, room_id: str, reflection: Reflection, text: str) -> Posted:
        message, created = await message_repo.append_message(
            self._database,
            room_id=room_id,
            role="assistant",
            content=text,
            dedupe_key=f"reflection:{reflection.id}",
            created_at=self._clock(),
            meta={
                "proactive": True,
                "reflection_trigger": reflection.trigger,
                "goal_id": reflection.goal_id,
                "tone": reflection.tone,
            },
        )
        if created and self._events is not None:
            await self._events.publish(message_created(message))
        reflection.action = "message"
        reflection.message = text
        reflection.message_id = message.id
        return Posted(message, created)

    async def finish(
        self, reflection: Reflection, started: float, *, skipped: str | None = None
    ) -> Reflection:
        reflection.skipped = skipped
        if skipped and not reflection.reason:
            reflection.reason = {
                "last_message_is_assistant": "the last lobby message is the assistant's",
                "rate_limited": "rate limited (cooldown or daily maximum)",
                "no_goal": "no open curiosity",
                "in_progress": "another reflection of this lobby is in progress",
            }.get(skipped, skipped)
        reflection.duration_ms = (time.perf_counter() - started) * 1000
        now = self._clock()
        await store.record_reflection(self._database, reflection=reflection, now=now)
        async with self._database.session() as session:
            stats = await store.get_stats(session, room_id=reflection.room_id)
        await self.live.enter(
            reflection.room_id, "done", at=now, trigger=reflection.trigger, action=reflection.action
        )
        await self.live.update(stats, reflection)
        log.info(
            "lobby.reflection.done",
            room_id=reflection.room_id,
            action=reflection.action,
            skipped=skipped,
            model_calls=reflection.model_calls,
        )
        return reflection
