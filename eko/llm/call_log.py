"""One row of llm_calls per attempt: what it holds, and writing it without ever failing a call."""

from __future__ import annotations

import time
from dataclasses import dataclass

import structlog

from eko.llm.types import (
    Attempt,
    CallRecorder,
    FailureCause,
    LLMCallRecord,
    Outcome,
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)

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


class AttemptLog:
    """One model call's attempts: each is kept (for the Completion or the error), logged as
    `llm.call` and written as one llm_calls row."""

    def __init__(
        self, call: CallContext, recorder: CallRecorder | None, *, dump_prompts: bool
    ) -> None:
        self.call = call
        self.attempts: list[Attempt] = []
        self._recorder = recorder
        self._dump_prompts = dump_prompts

    async def close(
        self,
        provider: Provider,
        request: ProviderRequest,
        outcome: Outcome,
        started: float,
        *,
        response: ProviderResponse | None = None,
        error: str | None = None,
        cause: FailureCause | None = None,
    ) -> Attempt:
        """Close one attempt (begun at perf_counter `started`): remember, log, record it."""
        usage = response.usage if response is not None else Usage()
        attempt = Attempt(
            provider=provider.name,
            model=(response.model if response is not None and response.model else provider.model),
            outcome=outcome,
            duration_ms=elapsed_ms(started),
            usage=usage,
            error=error,
            cause=cause,
        )
        self.attempts.append(attempt)
        log_method = log.info if outcome in ("ok", "fallback") else log.warning
        log_method(
            "llm.call",
            purpose=self.call.purpose,
            provider=attempt.provider,
            model=attempt.model,
            outcome=outcome,
            attempt=len(self.attempts),
            duration_ms=round(attempt.duration_ms, 1),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            truncated=response.truncated if response is not None else None,
            room_id=self.call.room_id,
            message_id=self.call.message_id,
            error=error,
        )
        prompt = render_prompt_dump(request) if self._dump_prompts else None
        await write_call(self._recorder, call_record(self.call, attempt, prompt=prompt))
        return attempt


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
