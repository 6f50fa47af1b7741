"""The opportunity path (the seed's decision 1, step 2): after each activity summary, is there
something worth saying now? A curiosity about what people are discussing, or a stored fact that
answers a question just asked ("Besançon, non ?"). A strict threshold (seed decision 2) decides
message vs pass.

Two deciders. "model": one call answers message-or-pass with a confidence. "rules" (the default
with a small local model, which passes on almost everything when asked): eko/lobby/prescore.py
decides from the words, and the model is only asked to write the message.

No model call when the last message is the assistant's, when no goal or fact is near enough to
what is being said (or the rules say pass), or when the rate limits refuse a slot (claimed
before the call, so the opportunity path and the scheduled reflection share the same limits).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog

from eko.config import Settings
from eko.guard.language import detect_language
from eko.llm.runtime import LLMRuntime
from eko.lobby import context, store
from eko.lobby.context import Line
from eko.lobby.decision_call import ask_decision, ask_output
from eko.lobby.mentions import persona_name
from eko.lobby.outputs import OpportunityDecision, OpportunityMessage
from eko.lobby.prescore import (
    Known,
    Prescore,
    Spoken,
    open_questions,
    people_now,
    prescore,
    says_it,
)
from eko.lobby.reflection import GOALS_CONSIDERED, Reflector
from eko.memory.items import ItemHit, MemoryItems
from eko.memory.scopes import room_key
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary, Reflection
from eko.store.models import Room, utcnow

log = structlog.get_logger("eko.lobby")

PURPOSE = "reflection_opportunity"
WRITE_PURPOSE = "reflection_opportunity_write"
CANDIDATES = 5
# Open questions whose facts are looked up (most recent first).
QUESTIONS_LOOKED_UP = 2
LANGUAGE_NAMES = {"fr": "français", "en": "anglais"}


@dataclass(frozen=True, slots=True)
class Said:
    """What the assistant says, and the curiosity it poses (None: a fact)."""

    text: str
    goal_id: str | None


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
        by_rules: bool = False,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._items = items
        self._prompts = prompts
        self._settings = settings
        self._reflector = reflector
        self._min_score = candidate_min_score
        self.by_rules = by_rules
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
        if self.by_rules:
            return await self._by_rules(room, lines, summary, started)
        now_talk = " ".join([summary.summary] + [line.message.content for line in lines[-5:]])
        goals = await self._near(room.id, now_talk, kind="goal", keys=[room_key(room.id)])
        facts = await self._near(room.id, now_talk, kind="fact", keys=context.lobby_keys(room.id))
        if not goals and not facts:
            return None

        async def decide(reflection: Reflection) -> Said | None:
            hint = context.tone_hint([line.message.content for line in lines])
            reflection.meta = {**reflection.meta, "tone_hint": hint}
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
                return None
            reflection.tone = decision.tone or hint
            goal_id = goals[decision.goal - 1].item.id if 1 <= decision.goal <= len(goals) else None
            return Said(decision.message.strip(), goal_id)

        return await self._speak(
            room, summary, started, decide, counts=(len(goals), len(facts)), meta={}
        )

    async def _by_rules(
        self, room: Room, lines: Sequence[Line], summary: ActivitySummary, started: float
    ) -> Reflection | None:
        """The rules decide (eko/lobby/prescore.py); the model only writes what to say."""
        spoken = [
            Spoken(line.speaker, line.message.content, line.message.role == "assistant")
            for line in lines
        ]
        goals = await self._items.list_items(
            keys=[room_key(room.id)], kind="goal", status="open", limit=GOALS_CONSIDERED
        )
        facts: dict[str, Known] = {}
        for question in open_questions(people_now(spoken))[:QUESTIONS_LOOKED_UP]:
            for hit in await self._near(
                room.id, question.text, kind="fact", keys=context.lobby_keys(room.id)
            ):
                facts.setdefault(
                    hit.item.id, Known(hit.item.id, hit.item.subject, hit.item.content)
                )
        score = prescore(
            spoken,
            goals=[Known(goal.id, goal.subject, goal.content) for goal in goals],
            facts=list(facts.values()),
        )
        log.info(
            "lobby.opportunity.prescore",
            room_id=room.id,
            action=score.action,
            reason=score.reason,
            kind=score.kind,
        )
        if score.action != "message" or score.item is None:
            return None
        name = persona_name(room, self._settings)

        async def write(reflection: Reflection) -> Said | None:
            return await self._write(reflection, score, name=name, lines=lines)

        meta = {"decided_by": "rules", "prescore": score.reason}
        counts = (len(goals), len(facts))
        return await self._speak(room, summary, started, write, counts=counts, meta=meta)

    async def _write(
        self, reflection: Reflection, score: Prescore, *, name: str, lines: Sequence[Line]
    ) -> Said | None:
        item = score.item
        assert item is not None
        if score.kind == "fact" and score.question is not None:
            task = self._prompts.text("lobby/write_fact.md").format(
                speaker=score.question.speaker, question=score.question.text, fact=item.content
            )
        else:
            task = self._prompts.text("lobby/write_goal.md").format(
                subject=item.subject, goal=item.content
            )
        people = [line.message.content for line in lines if line.message.role != "assistant"]
        language = detect_language(" ".join(people[-5:]))
        hint = context.tone_hint([line.message.content for line in lines])
        reflection.tone = hint
        reflection.reason = score.reason
        prompt = self._prompts.text("lobby/opportunity_write.md").format(
            name=name,
            language=LANGUAGE_NAMES.get(language, "la langue des messages"),
            messages=context.render_lines(lines[-8:]),
            task=task,
            tone=hint,
        )
        written = await ask_output(
            self._runtime, reflection, prompt, output=OpportunityMessage, purpose=WRITE_PURPOSE
        )
        text = _clean(written.message, name) if written is not None else ""
        if not text:
            reflection.reason = f"{score.reason}; the model wrote no message ({reflection.reason})"
            return None
        goal_id = item.id if score.kind == "goal" else None
        if says_it(score, text):
            reflection.meta = {**reflection.meta, "written_by": "model"}
            return Said(text, goal_id)
        # A small model answers its own curiosity, apologises or introduces itself: the
        # curiosity or the fact, in memory's own words, says what was decided.
        reflection.meta = {**reflection.meta, "written_by": "memory", "model_wrote": text}
        return Said(item.content.strip(), goal_id)

    async def _speak(
        self,
        room: Room,
        summary: ActivitySummary,
        started: float,
        say: Callable[[Reflection], Awaitable[Said | None]],
        *,
        counts: tuple[int, int],
        meta: Mapping[str, object],
    ) -> Reflection:
        """Claim a slot, ask `say` what to say, post it; the slot is given back when nothing
        is posted."""
        now = self._clock()
        await self._reflector.settle(room.id, now)
        reflection = self._reflector.new_reflection(
            room.id, trigger="opportunity", forced=False, now=now
        )
        reflection.activity_summary = summary.summary
        reflection.goals_count, reflection.facts_count = counts
        reflection.meta = dict(meta)
        token = await store.claim_slot(
            self._database, room_id=room.id, now=now, limits=self._reflector.limits
        )
        if token is None:
            reflection.rate_limited = True
            return await self._reflector.finish(reflection, started, skipped="rate_limited")
        try:
            said = await say(reflection)
            if said is None:
                return await self._reflector.finish(reflection, started)
            reflection.goal_id = said.goal_id
            posted = await self._reflector.post(room.id, reflection, said.text)
            if said.goal_id is not None:
                await self._items.mark_asked(said.goal_id)
            await store.confirm_slot(
                self._database,
                room_id=room.id,
                now=now,
                goal_id=said.goal_id,
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


def _clean(text: str, name: str) -> str:
    """The message as posted: no surrounding quotes, no "Eko:" or "Eko," the model put before
    its own words."""
    text = text.strip().strip('"«»“”').strip()
    if name:
        text = re.sub(rf"^{re.escape(name)}\s*[:,]\s*", "", text, flags=re.IGNORECASE)
    return text.strip()
