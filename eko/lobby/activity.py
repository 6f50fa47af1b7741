"""Activity summaries (the seed's decision 1, step 1): every 10 minutes, the lobby's messages
since the last summary become one summary (period, message count, participants, text), stored
per lobby. No new message from a person → no model call."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog

from eko.config import Settings
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.lobby import context, store
from eko.lobby.mentions import persona_name
from eko.lobby.outputs import SummaryOutput
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.lobby_models import ActivitySummary
from eko.store.models import Room, new_id, utcnow

log = structlog.get_logger("eko.lobby")

PURPOSE = "activity_summary"


class ActivitySummarizer:
    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        prompts: PromptLibrary,
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._prompts = prompts
        self._settings = settings
        self._clock = clock

    async def summarize(self, room_id: str) -> ActivitySummary | None:
        """Summarize what was said since the last summary; None when nobody spoke (no model
        call) or another worker summarized the same messages first."""
        async with self._database.session() as session:
            room = await session.get(Room, room_id)
            if room is None or room.kind != "lobby":
                return None
            after = await store.last_summarized_seq(session, room_id=room_id)
        name = persona_name(room, self._settings)
        lines = await context.lobby_lines(
            self._database,
            room_id=room_id,
            assistant_name=name,
            after_seq=after,
            limit=self._settings.activity_summary_max_messages,
        )
        people = [line for line in lines if line.message.role == "user"]
        if not people:
            return None
        prompt = self._prompts.text("lobby/activity_summary.md").format(
            name=name, messages=context.render_lines(lines)
        )
        completion = await self._runtime.complete(
            [ChatMessage("user", prompt)],
            output=SummaryOutput,
            purpose=PURPOSE,
            room_id=room_id,
            priority="background",
        )
        data = completion.data
        text = data.summary if data is not None else completion.text
        participants = sorted({line.speaker for line in people})
        summary = ActivitySummary(
            id=new_id(),
            room_id=room_id,
            period_start=lines[0].message.created_at,
            period_end=lines[-1].message.created_at,
            first_seq=lines[0].message.seq,
            last_seq=lines[-1].message.seq,
            message_count=len(lines),
            participants=participants,
            summary=text.strip(),
            llm_tokens=sum(
                a.usage.input_tokens + a.usage.output_tokens for a in completion.attempts
            ),
            created_at=self._clock(),
        )
        if not await store.add_summary(self._database, summary=summary):
            return None
        log.info("lobby.activity.summarized", room_id=room_id, messages=len(lines))
        return summary
