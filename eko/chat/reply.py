"""The simple reply path: persona prompt + recent turns -> LLM runtime -> a Draft.

The chat engine (orchestrator, plan, executor) is another Writer with the same contract.
"""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy import select

from eko.chat.pipeline import Draft, Turn
from eko.chat.text import cap_answer
from eko.config import Settings
from eko.llm.errors import LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, Completion
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import User

log = structlog.get_logger("eko.chat")


class ReplyWriter:
    """The simple Writer: persona + recent turns -> one model call -> a bounded Draft."""

    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        prompts: PromptLibrary,
        settings: Settings,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._prompts = prompts
        self._settings = settings

    async def write(self, turn: Turn) -> Draft:
        async with self._database.session() as session:
            history = await message_repo.recent_messages(
                session,
                room_id=turn.room.id,
                limit=self._settings.recent_turns,
                up_to_seq=turn.user_message.seq,
            )
            names = await _sender_names(session, history)
        prompt = [ChatMessage("system", self._prompts.persona(turn.room.persona))]
        prompt += _turns(history, names, self._settings)
        try:
            completion = await self._runtime.complete(
                prompt, purpose="reply", room_id=turn.room.id, message_id=turn.user_message.id
            )
        except LLMError as exc:
            log.warning("chat.reply.fallback", reason="llm_error", error=str(exc))
            return fallback_draft(self._prompts, "llm_error", error=str(exc)[:500])
        text = cap_answer(completion.text)
        if not text:
            log.warning("chat.reply.fallback", reason="empty_answer")
            return fallback_draft(self._prompts, "empty_answer", **provenance(completion))
        return Draft(content=text, meta=provenance(completion))


def fallback_draft(prompts: PromptLibrary, reason: str, **meta: Any) -> Draft:
    """The safe answer when no model could write one; the reason goes to metadata."""
    return Draft(
        content=prompts.text("system/fallback_answer.md"),
        type="fallback",
        meta={"fallback": reason, **meta},
    )


def provenance(completion: Completion[Any]) -> dict[str, Any]:
    return {
        "provider": completion.provider,
        "model": completion.model,
        "usage": {
            "input_tokens": completion.usage.input_tokens,
            "output_tokens": completion.usage.output_tokens,
        },
        "duration_ms": round(completion.duration_ms, 1),
        "fallback_used": completion.fallback_used,
        "truncated": completion.truncated,
        "attempts": [
            {"provider": a.provider, "model": a.model, "outcome": a.outcome, "error": a.error}
            for a in completion.attempts
        ],
    }


def _turns(history: Any, names: dict[int, str], settings: Settings) -> list[ChatMessage]:
    """Recent turns, newest kept first when the character budget runs out."""
    turns: list[ChatMessage] = []
    budget = settings.recent_max_chars
    for message in reversed(history):
        if message.role not in ("user", "assistant"):
            continue
        content = message.content[:budget]
        budget -= len(content)
        name = settings.assistant_name if message.role == "assistant" else None
        if message.role == "user" and message.sender_id is not None:
            name = names.get(message.sender_id)
        turns.append(ChatMessage(message.role, content, name=name))
        if budget <= 0:
            break
    return list(reversed(turns))


async def _sender_names(session: Any, history: Any) -> dict[int, str]:
    ids = {m.sender_id for m in history if m.sender_id is not None}
    if not ids:
        return {}
    rows = await session.execute(select(User.id, User.display_name).where(User.id.in_(ids)))
    return {row[0]: row[1] for row in rows}
