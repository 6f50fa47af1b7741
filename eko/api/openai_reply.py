"""What a stored exchange becomes in OpenAI's shape: the reply or the error a client gets
(an answer still owed, no model answered), the finish reason, the usage, the completion id."""

from __future__ import annotations

import json

import structlog

from eko.api.schemas.openai import OpenAIError
from eko.chat.service import Exchange
from eko.store import llm_calls as call_repo
from eko.store.models import Message
from eko.store.outage import database_busy_or_unavailable
from eko.wiring import Services

log = structlog.get_logger("eko.api")

# The message is stored and will be answered (the database failed while answering): the same
# Idempotency-Key again returns the answer once it is written, never a second one.
PENDING = (
    "Your message is stored and will be answered, but the answer could not be written yet "
    "(database busy). Retry with the same Idempotency-Key to receive it."
)
# No model answered: the client may retry after this many seconds.
NO_ANSWER_RETRY_AFTER_S = 5
NO_ANSWER = (
    "No model could answer this message right now (Eko's canned apology is not an answer). "
    "Your message is stored; retry later (with a new Idempotency-Key, if you sent one: this "
    "one now returns this error)."
)


async def usage_of(services: Services, user_message: Message) -> dict[str, int]:
    """What the model calls for this message cost (none for a cached or paywalled answer).
    Read after the answer is stored: a database too busy to tell gives zeros, never an error
    for a message that was answered."""
    try:
        async with services.database.session() as session:
            calls = await call_repo.list_calls(session, message_id=user_message.id, limit=1000)
    except Exception as exc:
        if not database_busy_or_unavailable(exc):
            raise
        log.warning("openai.usage_unavailable", message_id=user_message.id)
        calls = []
    prompt = sum(c.input_tokens for c in calls)
    completion = sum(c.output_tokens for c in calls)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def reply_of(exchange: Exchange) -> Message:
    if exchange.answer_pending:
        raise OpenAIError(
            503, PENDING, type="server_error", code="answer_pending", headers={"Retry-After": "5"}
        )
    if exchange.assistant_message is None:  # a direct room always answers
        raise OpenAIError(500, "No reply was written.", type="server_error")
    if is_fallback(exchange.assistant_message):
        raise OpenAIError(
            503,
            NO_ANSWER,
            type="server_error",
            code="model_unavailable",
            headers={"Retry-After": str(NO_ANSWER_RETRY_AFTER_S)},
        )
    return exchange.assistant_message


def is_fallback(reply: Message) -> bool:
    """The canned apology written when no model answered (eko/chat/reply.py)."""
    return reply.type == "fallback" or bool((reply.meta or {}).get("fallback"))


def finish_reason(reply: Message) -> str:
    if reply.tool_calls:
        return "tool_calls"
    return "length" if (reply.meta or {}).get("truncated") else "stop"


def completion_id(user_message: Message) -> str:
    return f"chatcmpl-{user_message.id}"


def error_chunk(message: str, code: str) -> bytes:
    body = {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
    return f"data: {json.dumps(body)}\n\n".encode()
