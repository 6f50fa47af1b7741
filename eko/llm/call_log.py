"""One row of llm_calls per attempt: what it holds, and writing it without ever failing a call."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from eko.llm.types import Attempt, CallRecorder, LLMCallRecord, ProviderRequest

log = structlog.get_logger("eko.llm")


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a call served: its purpose and the room/message it was made for."""

    purpose: str
    room_id: str | None
    message_id: str | None


def call_record(call: CallContext, attempt: Attempt, *, prompt: str | None) -> LLMCallRecord:
    return LLMCallRecord(
        purpose=call.purpose,
        provider=attempt.provider,
        model=attempt.model,
        input_tokens=attempt.usage.input_tokens,
        output_tokens=attempt.usage.output_tokens,
        duration_ms=attempt.duration_ms,
        outcome=attempt.outcome,
        room_id=call.room_id,
        message_id=call.message_id,
        error=attempt.error,
        prompt=prompt,
    )


async def write_call(recorder: CallRecorder | None, record: LLMCallRecord) -> None:
    if recorder is None:
        return
    try:
        await recorder.record(record)
    except Exception:
        # The call log is observability: losing a row must never lose the answer.
        log.warning(
            "llm.record_failed", purpose=record.purpose, provider=record.provider, exc_info=True
        )


def render_prompt_dump(request: ProviderRequest) -> str:
    """The prompt as stored in llm_calls.prompt when debug dumps are on: one block per message."""
    parts = []
    for message in request.messages:
        speaker = f"{message.role}({message.name})" if message.name else message.role
        parts.append(f"[{speaker}]\n{message.content}")
    if request.json_schema is not None:
        parts.append(f"[json_schema]\n{request.json_schema}")
    return "\n\n".join(parts)
