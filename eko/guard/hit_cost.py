"""What a served cached answer costs in model calls: the llm_calls rows of its exchange.

A hit must cost nothing: no call on the request path, none in its background work (eko.jobs.
after_reply skips cached replies). `eko bench guard` and the tests count with this.
"""

from __future__ import annotations

from sqlalchemy import func, or_, select

from eko.store.db import Database
from eko.store.models import LLMCall, Message


async def exchange_model_calls(database: Database, *, user_message_id: str) -> int:
    """Model calls made for one exchange: llm_calls rows naming its user message or its reply,
    and the room's rows made after the question was stored that name no message (background
    work such as summaries). Call it once the exchange's jobs have run, before the room's next
    message."""
    async with database.session() as session:
        question = await session.get(Message, user_message_id)
        if question is None:
            raise LookupError(user_message_id)
        replies = select(Message.id).where(Message.reply_to_id == question.id)
        count = await session.execute(
            select(func.count())
            .select_from(LLMCall)
            .where(
                or_(
                    LLMCall.message_id == question.id,
                    LLMCall.message_id.in_(replies),
                    (LLMCall.room_id == question.room_id)
                    & LLMCall.message_id.is_(None)
                    & (LLMCall.created_at >= question.created_at),
                )
            )
        )
        return int(count.scalar_one())
