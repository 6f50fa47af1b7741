"""ChainWriter: the chat's writer that sends reflexive messages through the chain.

Every message is classified (eko/chain/classify.py). A simple one goes to the inner writer
(the chat engine) as before; a reflexive one is answered by the chain (eko/chain/, which never
imports the chat). A chain that returns no reply (every stage offline, empty or out of turns)
or breaks falls back to the inner writer, so a message is always answered. The classification
and, for a reflexive message, the chain's report in the seed's shape
`{reply, mode, turns, chain, tools_used, skipped, fallback}` are stored in the assistant
message's metadata, `meta["complexity"]` and `meta["chain"]`, also when the chain fell back:
the stages it ran are reported whoever wrote the answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from eko.chain.build import build_chain, complexity_rules
from eko.chain.classify import ComplexityRules, classify
from eko.chain.report import ChainResult
from eko.chain.runner import ChainRunner
from eko.chain.tools import DocsSearch, ToolContext, WebSearch
from eko.chat.engine.answer_lock import compose_answer
from eko.chat.pipeline import Draft, Turn, Writer
from eko.chat.reply_meta import ReplyMeta
from eko.config import Settings
from eko.llm.caller_format import CallerFormat
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.memory.service import Memory
from eko.prompts.library import PromptLibrary
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message

log = structlog.get_logger("eko.chain")

HISTORY_MESSAGES = 4
HISTORY_MESSAGE_CHARS = 500
_MEMORY_TOOLS = frozenset({"search_memories", "search_summaries", "remember_fact"})


class ChainWriter:
    def __init__(
        self,
        *,
        inner: Writer,
        runner: ChainRunner,
        database: Database,
        rules: ComplexityRules | None = None,
        max_answer_chars: int = 4000,
        enabled: bool = True,
    ) -> None:
        self.inner = inner
        self.runner = runner
        self._database = database
        self.rules = rules or ComplexityRules()
        self._max_answer_chars = max_answer_chars
        self.enabled = enabled

    async def write(self, turn: Turn) -> Draft:
        # The caller's category, when one came with the message (POST /v1/chat `route`).
        route = (turn.user_message.meta or {}).get("route")
        verdict = classify(turn.user_message.content, route, self.rules)
        complexity = {"mode": verdict.mode, "rule": verdict.rule}
        # JSON or tool calls for an API caller: the engine's writer holds the model to them.
        structured = CallerFormat.from_meta(turn.user_message.meta) is not None
        if not self.enabled or verdict.mode == "simple" or structured:
            draft = await self.inner.write(turn)
            draft.meta.complexity = complexity
            return draft
        try:
            result = await self.runner.run(
                turn.user_message.content,
                ToolContext(user=turn.user, room=turn.room, message_id=turn.user_message.id),
                history=await self._history(turn),
                room_id=turn.room.id,
                instructions=turn.room.instructions,
            )
        except Exception:
            log.exception("chain.failed", message_id=turn.user_message.id)
            result = ChainResult(reply=None, stages=[], fallback="chain_error")
        else:
            content, flags = compose_answer(
                result.reply or "", web=None, max_chars=self._max_answer_chars
            )
            if content:
                chain_meta = {**result.to_meta(), "reply": content}
                used = {tool["name"] for tool in chain_meta["tools_used"]}
                return Draft(
                    content=content,
                    meta=ReplyMeta(
                        intent=None,
                        mode="reflexive",
                        personal_context=bool(used & _MEMORY_TOOLS),
                        flags=flags,
                        complexity=complexity,
                        chain=chain_meta,
                    ),
                )
            log.warning("chain.no_reply", message_id=turn.user_message.id, turns=result.turns)
            result.fallback = "no_reply"
        draft = await self.inner.write(turn)
        draft.meta.set(complexity={**complexity, "chain_fallback": True}, chain=result.to_meta())
        return draft

    async def _history(self, turn: Turn) -> list[ChatMessage]:
        """The last few messages of the recent window, for the stages' context (the window
        is read once per message by the chat service; read here only for a bare turn)."""
        rows: Sequence[Message]
        if turn.recent is not None:
            rows = turn.recent.messages
        else:
            async with self._database.session() as session:
                rows = await message_repo.recent_messages(
                    session,
                    room_id=turn.room.id,
                    limit=HISTORY_MESSAGES + 1,
                    up_to_seq=turn.user_message.seq,
                )
        history = [
            ChatMessage(row.role, row.content[:HISTORY_MESSAGE_CHARS])  # type: ignore[arg-type]
            for row in rows
            if row.id != turn.user_message.id and row.role in ("user", "assistant")
        ]
        return history[-HISTORY_MESSAGES:]


def build_chain_writer(
    *,
    settings: Settings,
    inner: Writer,
    database: Database,
    runtime: LLMRuntime,
    prompts: PromptLibrary,
    memory: Memory | None = None,
    docs: DocsSearch | None = None,
    web: WebSearch | None = None,
) -> ChainWriter:
    """The chat's writer: reflexive messages through the chain, simple ones to `inner`."""
    runner = build_chain(
        settings=settings,
        runtime=runtime,
        prompts=prompts,
        memory=memory,
        docs=docs,
        web=web,
    )
    return ChainWriter(
        inner=inner,
        runner=runner,
        database=database,
        rules=complexity_rules(settings),
        max_answer_chars=settings.chat_max_answer_chars,
        enabled=settings.chain_on,
    )
