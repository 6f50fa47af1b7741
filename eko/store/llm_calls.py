"""The llm_calls log: one row per model call. Implements the LLM runtime's CallRecorder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.db import Database
from eko.store.models import LLMCall

log = structlog.get_logger("eko.store")


class CallRow(Protocol):
    """What one row holds: eko.llm.types.LLMCallRecord fits (store sits below llm and does not
    import it)."""

    @property
    def purpose(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def duration_ms(self) -> float: ...
    @property
    def outcome(self) -> str: ...
    @property
    def room_id(self) -> str | None: ...
    @property
    def message_id(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def prompt(self) -> str | None: ...


class DatabaseCallRecorder:
    """Writes each call in its own short transaction, so a failed request still leaves its trace."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def record(self, call: CallRow) -> None:
        async with self._database.session() as session:
            session.add(
                LLMCall(
                    purpose=call.purpose,
                    provider=call.provider,
                    model=call.model,
                    input_tokens=call.input_tokens,
                    output_tokens=call.output_tokens,
                    duration_ms=call.duration_ms,
                    outcome=call.outcome,
                    error=call.error,
                    room_id=call.room_id,
                    message_id=call.message_id,
                    prompt=call.prompt,
                )
            )


async def list_calls(
    session: AsyncSession,
    *,
    message_id: str | None = None,
    room_id: str | None = None,
    limit: int = 100,
) -> Sequence[LLMCall]:
    query = select(LLMCall).order_by(LLMCall.id)
    if message_id is not None:
        query = query.where(LLMCall.message_id == message_id)
    if room_id is not None:
        query = query.where(LLMCall.room_id == room_id)
    result = await session.execute(query.limit(limit))
    return result.scalars().all()
