"""After each exchange: ONE structured model call extracts facts, self-knowledge and curiosities
(written with dedup), and closes the curiosities the user's message answered (curiosity → fact).

Runs as an AfterReply hook, off the request path. A model that fails or answers garbage only
costs this exchange's extraction: it is logged, recorded in llm_calls by the runtime, and
nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from pydantic import BaseModel, create_model
from sqlalchemy import select

from eko.config import Settings
from eko.embed.base import EmbeddingError
from eko.llm.errors import LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.memory.extraction_filter import ProposedItem, worth_writing
from eko.memory.items import MemoryItems, NewItem, WriteResult
from eko.memory.outputs import Confidence, bounded_list, bounded_text
from eko.memory.scopes import turn_keys, write_key
from eko.memory.text import clip, one_line
from eko.memory.turns import ChatTurn
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.memory_models import MemoryItem
from eko.store.models import Message

log = structlog.get_logger("eko.memory")

# Bounds of the structured answer: its longest valid form must fit memory_extract_max_tokens
# (a JSON cut at max_tokens does not parse), about 1,100 characters here.
MAX_SUBJECT_CHARS = 60
MAX_ITEM_CHARS = 200
MAX_ITEMS = 3
MAX_ANSWERED = 2
# Open curiosities shown to the model so it can tell which one the user answered.
MAX_GOALS_SHOWN = 8
# Exchange text shown to the model (a small local model has a small context).
MAX_MESSAGE_CHARS = 1200
EXTRACTION_TEMPERATURE = 0.2
# Reply types that are no real exchange: nothing to learn from them.
SKIPPED_REPLY_TYPES = frozenset({"paywall"})

ItemKind = Literal["fact", "self", "goal"]


def extraction_output_model() -> type[BaseModel]:
    subject = bounded_text(MAX_SUBJECT_CHARS)
    content = bounded_text(MAX_ITEM_CHARS)
    item = create_model(
        "MemoryItemOut",
        kind=(ItemKind, ...),
        subject=(subject, ...),
        content=(content, ...),
        confidence=(Confidence, ...),
    )
    answered = create_model("AnsweredGoal", goal=(int, ...), answer=(content, ...))
    model: type[BaseModel] = create_model(
        "MemoryExtraction",
        items=(bounded_list(item, MAX_ITEMS), ...),
        answered_goals=(bounded_list(answered, MAX_ANSWERED), ...),
    )
    return model


_OUTPUT = extraction_output_model()


@dataclass(slots=True)
class ExtractionResult:
    written: list[WriteResult] = field(default_factory=list)
    answered: list[tuple[MemoryItem, WriteResult]] = field(default_factory=list)
    error: str | None = None

    @property
    def created(self) -> int:
        return sum(1 for result in self.written if result.created)

    @property
    def deduplicated(self) -> int:
        return sum(1 for result in self.written if not result.created)


@dataclass(frozen=True, slots=True)
class ExchangeText:
    """What the extractor reads of one exchange (the bench builds it from its data)."""

    assistant: str
    user_name: str
    user: str
    reply: str | None
    previous: str | None = None
    previous_by_assistant: bool = True


def extraction_prompt(
    prompts: PromptLibrary,
    exchange: ExchangeText,
    goals: Sequence[tuple[str, str, bool]] = (),
) -> list[ChatMessage]:
    """The extraction call's messages; `goals` = open curiosities (subject, question, asked)."""
    lines = ["Open questions of the assistant:"]
    if goals:
        lines += [
            f"{number}. [{subject}] {content}" + (" (the assistant asked it)" if asked else "")
            for number, (subject, content, asked) in enumerate(goals, start=1)
        ]
    else:
        lines.append("(none)")
    lines += ["", "Exchange:"]
    if exchange.previous is not None:
        speaker = exchange.assistant if exchange.previous_by_assistant else "Someone"
        lines.append(f'Just before, {speaker}: "{_short(exchange.previous)}"')
    lines.append(f'User ({exchange.user_name}): "{_short(exchange.user)}"')
    if exchange.reply is not None:
        lines.append(f'{exchange.assistant}: "{_short(exchange.reply)}"')
    return [
        ChatMessage("system", prompts.text("memory/extract.md")),
        ChatMessage("user", "\n".join(lines)),
    ]


async def ask_extraction(
    runtime: LLMRuntime,
    prompt: Sequence[ChatMessage],
    *,
    max_tokens: int,
    room_id: str | None = None,
    message_id: str | None = None,
) -> Any:
    """The extraction call, at background priority: a person's reply goes first. Raises
    LLMError when no provider gave a parsable answer."""
    completion = await runtime.complete(
        prompt,
        output=_OUTPUT,
        purpose="memory_extract",
        room_id=room_id,
        message_id=message_id,
        max_tokens=max_tokens,
        temperature=EXTRACTION_TEMPERATURE,
        priority="background",
    )
    return completion.data


def kept_items(data: Any, exchange: ExchangeText) -> list[Any]:
    """The proposed items worth writing (eko/memory/extraction_filter.py)."""
    return [
        item
        for item in data.items
        if worth_writing(
            ProposedItem(item.kind, item.subject, one_line(item.content)),
            user_text=exchange.user,
            answered_text=exchange.previous if exchange.previous_by_assistant else None,
            reply_text=exchange.reply,
            names=(exchange.user_name, exchange.assistant),
        )
    ]


class MemoryExtractor:
    def __init__(
        self,
        *,
        database: Database,
        runtime: LLMRuntime,
        items: MemoryItems,
        prompts: PromptLibrary,
        settings: Settings,
    ) -> None:
        self._database = database
        self._runtime = runtime
        self._items = items
        self._prompts = prompts
        self._settings = settings

    async def extract(self, turn: ChatTurn, reply: Message | None) -> ExtractionResult:
        result = ExtractionResult()
        goals = await self._items.open_goals(
            keys=turn_keys(turn.room, turn.user), limit=MAX_GOALS_SHOWN
        )
        previous = await self._previous_message(turn)
        exchange = ExchangeText(
            assistant=self._settings.assistant_name,
            user_name=one_line(turn.user.display_name) or "User",
            user=turn.user_message.content,
            reply=None if reply is None else reply.content,
            previous=None if previous is None else previous.content,
            previous_by_assistant=previous is not None and previous.role == "assistant",
        )
        prompt = extraction_prompt(
            self._prompts,
            exchange,
            [(goal.subject, goal.content, goal.status == "asked") for goal in goals],
        )
        try:
            data = await ask_extraction(
                self._runtime,
                prompt,
                max_tokens=self._settings.memory_extract_max_tokens,
                room_id=turn.room.id,
                message_id=turn.user_message.id,
            )
        except LLMError as exc:
            log.warning(
                "memory.extract.model_failed",
                room_id=turn.room.id,
                message_id=turn.user_message.id,
                error=str(exc),
            )
            result.error = f"model failed: {str(exc)[:300]}"
            return result
        scope = write_key(turn.room, turn.user)
        new_items = [
            NewItem(
                kind=item.kind,
                subject=item.subject,
                content=item.content,
                confidence=item.confidence,
                source_message_id=turn.user_message.id,
                source_room_id=turn.room.id,
            )
            for item in kept_items(data, exchange)
        ]
        try:
            for answered in data.answered_goals:
                if not 1 <= answered.goal <= len(goals) or not one_line(answered.answer):
                    continue  # the model pointed at no listed goal
                goal = goals[answered.goal - 1]
                fact = await self._items.answer_goal(
                    goal.id,
                    answer=answered.answer,
                    scope=scope,
                    source_message_id=turn.user_message.id,
                    source_room_id=turn.room.id,
                )
                if fact is not None:
                    result.answered.append((goal, fact))
            result.written = await self._items.remember_many(new_items, scope=scope)
        except EmbeddingError as exc:
            log.warning("memory.extract.embed_failed", room_id=turn.room.id, error=str(exc))
            result.error = f"embedder failed: {str(exc)[:300]}"
        log.info(
            "memory.extracted",
            room_id=turn.room.id,
            message_id=turn.user_message.id,
            created=result.created,
            deduplicated=result.deduplicated,
            answered_goals=len(result.answered),
        )
        return result

    async def _previous_message(self, turn: ChatTurn) -> Message | None:
        """The message just before the user's: the assistant's question it may answer."""
        async with self._database.session() as session:
            return (
                await session.execute(
                    select(Message)
                    .where(
                        Message.room_id == turn.room.id,
                        Message.seq < turn.user_message.seq,
                    )
                    .order_by(Message.seq.desc())
                    .limit(1)
                )
            ).scalar_one_or_none()


def _short(text: str) -> str:
    return clip(one_line(text), MAX_MESSAGE_CHARS)


class ExtractionHook:
    """AfterReply: extract memory from the exchange that was just stored."""

    name = "memory.extract"
    uses_model = True  # waits while every provider is down (eko.jobs.registry)

    def __init__(self, extractor: MemoryExtractor, *, min_chars: int = 0) -> None:
        self._extractor = extractor
        self._min_chars = min_chars

    async def after(self, turn: ChatTurn, reply: Message) -> None:
        if reply.type in SKIPPED_REPLY_TYPES:
            return
        if len(turn.user_message.content.strip()) < self._min_chars:
            return
        await self._extractor.extract(turn, reply)
