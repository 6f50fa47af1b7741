"""LLMRuntime: the one entry point every service uses to call a model.

It tries the configured providers in order and falls back on any provider failure (transport,
HTTP, timeout, unusable or empty output). With an output model it asks for that JSON schema,
validates the answer, and re-asks the same provider once with the validation error before
falling back (unless the answer was cut at max_tokens: the same budget would cut it again).
Every attempt is recorded (one llm_calls row each) and logged as `llm.call`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import structlog
from pydantic import BaseModel

from eko.llm.errors import AllProvidersFailed, InvalidOutput, ProviderError
from eko.llm.structured import StructuredOutputError, output_schema, parse_output
from eko.llm.types import (
    Attempt,
    CallRecorder,
    ChatMessage,
    Completion,
    LLMCallRecord,
    Outcome,
    OutputT,
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)

if TYPE_CHECKING:
    import httpx

    from eko.config import Settings

log = structlog.get_logger("eko.llm")

# Sent back to a provider whose structured answer did not validate. It names the error so a
# capable model can fix it; a runtime mechanism, not a prompt of any feature.
CORRECTION_MESSAGE = (
    "Your previous answer was not valid for the required JSON schema ({error}). "
    "Answer again with only a JSON object that matches the schema."
)
# A bad answer echoed into the correction turn is cut: it only has to show what went wrong.
_MAX_ECHOED_ANSWER_CHARS = 2000


class LLMRuntime:
    def __init__(
        self,
        providers: Sequence[Provider],
        recorder: CallRecorder | None = None,
        *,
        debug_dump_prompts: bool = False,
        default_max_tokens: int = 200,
        default_temperature: float = 0.7,
        assistant_name: str = "Eko",
    ) -> None:
        if not providers:
            raise ValueError("LLMRuntime needs at least one provider")
        self.providers: tuple[Provider, ...] = tuple(providers)
        self._recorder = recorder
        self._debug_dump_prompts = debug_dump_prompts
        self._default_max_tokens = default_max_tokens
        self._default_temperature = default_temperature
        self._assistant_name = assistant_name

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        recorder: CallRecorder | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> LLMRuntime:
        from eko.llm.providers.factory import build_providers

        return cls(
            build_providers(settings, transport=transport),
            recorder,
            debug_dump_prompts=settings.debug_dump_prompts,
            default_max_tokens=settings.llm_max_tokens,
            default_temperature=settings.llm_temperature,
            assistant_name=settings.assistant_name,
        )

    @overload
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: type[OutputT],
        purpose: str,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
    ) -> Completion[OutputT]: ...

    @overload
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: None = None,
        purpose: str,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
    ) -> Completion[BaseModel]: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        output: type[BaseModel] | None = None,
        purpose: str,
        room_id: str | None = None,
        message_id: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] = (),
    ) -> Completion[Any]:
        """One answer from the first provider that gives a usable one.

        `Completion.usage` is the successful attempt's; every attempt's usage is in `attempts`
        (and in the call log). `duration_ms` is the whole call, fallbacks included.
        Raises AllProvidersFailed when no provider gave a usable answer.
        """
        started = time.perf_counter()
        base_request = ProviderRequest(
            messages=tuple(messages),
            json_schema=output_schema(output) if output is not None else None,
            max_tokens=max_tokens if max_tokens is not None else self._default_max_tokens,
            temperature=temperature if temperature is not None else self._default_temperature,
            stop=tuple(stop),
            assistant_name=self._assistant_name,
        )
        call = _CallContext(purpose=purpose, room_id=room_id, message_id=message_id)
        attempts: list[Attempt] = []
        for index, provider in enumerate(self.providers):
            answer = await self._ask(
                provider, base_request, output, call, attempts, first=index == 0
            )
            if answer is not None:
                return Completion(
                    text=answer.text,
                    data=answer.data,
                    provider=provider.name,
                    model=answer.model,
                    usage=answer.response.usage,
                    duration_ms=_elapsed_ms(started),
                    attempts=tuple(attempts),
                    truncated=answer.response.truncated,
                )
        raise AllProvidersFailed(tuple(attempts))

    async def _ask(
        self,
        provider: Provider,
        request: ProviderRequest,
        output: type[BaseModel] | None,
        call: _CallContext,
        attempts: list[Attempt],
        *,
        first: bool,
    ) -> _Answer | None:
        """One provider: one try, plus one corrective re-ask for structured output.

        Returns the usable answer, or None when this provider failed and the next should try.
        """
        tries = 2 if output is not None else 1
        for try_number in range(tries):
            started = time.perf_counter()
            try:
                response = await provider.generate(request)
            except ProviderError as exc:
                outcome: Outcome = "invalid" if isinstance(exc, InvalidOutput) else "error"
                await self._attempt(
                    attempts, call, provider, request, outcome, started, error=str(exc)
                )
                return None
            except Exception as exc:
                # A provider bug must not take the whole answer down while others remain.
                log.exception("llm.provider_crashed", provider=provider.name)
                error = f"{type(exc).__name__}: {exc}"
                await self._attempt(
                    attempts, call, provider, request, "error", started, error=error
                )
                return None

            text = response.text.strip()
            if not text:
                await self._attempt(
                    attempts,
                    call,
                    provider,
                    request,
                    "invalid",
                    started,
                    response=response,
                    error="empty answer",
                )
                return None

            data: BaseModel | None = None
            if output is not None:
                try:
                    data = parse_output(text, output)
                except StructuredOutputError as exc:
                    await self._attempt(
                        attempts,
                        call,
                        provider,
                        request,
                        "invalid",
                        started,
                        response=response,
                        error=_describe_invalid(exc.summary, response),
                    )
                    if response.truncated:
                        # Cut at max_tokens: a re-ask with the same budget and a longer prompt
                        # is cut again (and on a local model costs seconds).
                        return None
                    request = _with_correction(request, text, exc.summary)
                    continue

            outcome = "ok" if first and try_number == 0 else "fallback"
            attempt = await self._attempt(
                attempts, call, provider, request, outcome, started, response=response
            )
            return _Answer(text=text, data=data, model=attempt.model, response=response)
        return None

    async def aclose(self) -> None:
        for provider in self.providers:
            try:
                await provider.aclose()
            except Exception:
                log.warning("llm.close_failed", provider=provider.name, exc_info=True)

    async def _attempt(
        self,
        attempts: list[Attempt],
        call: _CallContext,
        provider: Provider,
        request: ProviderRequest,
        outcome: Outcome,
        started: float,
        *,
        response: ProviderResponse | None = None,
        error: str | None = None,
    ) -> Attempt:
        """Close one attempt: remember it, log it, record it."""
        usage = response.usage if response is not None else Usage()
        attempt = Attempt(
            provider=provider.name,
            model=(response.model if response is not None and response.model else provider.model),
            outcome=outcome,
            duration_ms=_elapsed_ms(started),
            usage=usage,
            error=error,
        )
        attempts.append(attempt)
        log_method = log.info if outcome in ("ok", "fallback") else log.warning
        log_method(
            "llm.call",
            purpose=call.purpose,
            provider=attempt.provider,
            model=attempt.model,
            outcome=outcome,
            attempt=len(attempts),
            duration_ms=round(attempt.duration_ms, 1),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            truncated=response.truncated if response is not None else None,
            room_id=call.room_id,
            message_id=call.message_id,
            error=error,
        )
        await self._record(
            LLMCallRecord(
                purpose=call.purpose,
                provider=attempt.provider,
                model=attempt.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                duration_ms=attempt.duration_ms,
                outcome=outcome,
                room_id=call.room_id,
                message_id=call.message_id,
                error=error,
                prompt=render_prompt_dump(request) if self._debug_dump_prompts else None,
            )
        )
        return attempt

    async def _record(self, record: LLMCallRecord) -> None:
        if self._recorder is None:
            return
        try:
            await self._recorder.record(record)
        except Exception:
            # The call log is observability: losing a row must never lose the answer.
            log.warning(
                "llm.record_failed", purpose=record.purpose, provider=record.provider, exc_info=True
            )


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    data: BaseModel | None
    model: str
    response: ProviderResponse


@dataclass(frozen=True, slots=True)
class _CallContext:
    purpose: str
    room_id: str | None
    message_id: str | None


def render_prompt_dump(request: ProviderRequest) -> str:
    """The prompt as stored in llm_calls.prompt when debug dumps are on: one block per message."""
    parts = []
    for message in request.messages:
        speaker = f"{message.role}({message.name})" if message.name else message.role
        parts.append(f"[{speaker}]\n{message.content}")
    if request.json_schema is not None:
        parts.append(f"[json_schema]\n{request.json_schema}")
    return "\n\n".join(parts)


def _with_correction(request: ProviderRequest, bad_answer: str, error: str) -> ProviderRequest:
    echoed = bad_answer[:_MAX_ECHOED_ANSWER_CHARS]
    return replace(
        request,
        messages=(
            *request.messages,
            ChatMessage(role="assistant", content=echoed),
            ChatMessage(role="user", content=CORRECTION_MESSAGE.format(error=error)),
        ),
    )


def _describe_invalid(summary: str, response: ProviderResponse) -> str:
    # A truncated answer is the usual reason a grammar-constrained JSON fails to parse.
    return f"{summary} (truncated at max_tokens)" if response.truncated else summary


def _elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
