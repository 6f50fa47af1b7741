"""`complete` and `stream` are one provider walk: the same script gives the same Completion,
the same call log and the same breaker verdicts, whichever way the answer was asked for."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest

from eko.llm.breaker import BreakerSnapshot
from eko.llm.deadline import message_deadline
from eko.llm.errors import (
    AllProvidersFailed,
    PromptTooLong,
    ProviderHTTPError,
    ProviderTimeout,
)
from eko.llm.prompt_budget import InputCut
from eko.llm.providers import FunctionModel
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import (
    Attempt,
    ChatMessage,
    LLMCallRecord,
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)

ASK = (ChatMessage("system", "Sois bref."), ChatMessage("user", "Résume ce long texte"))

CUT = InputCut(
    budget_tokens=100, original_tokens=180, kept_tokens=95, dropped_messages=2, cut_chars=300
)
CUT_ANSWER = ProviderResponse(
    text=" Un résumé coupé ",
    usage=Usage(input_tokens=95, output_tokens=4),
    model="served-model",
    truncated=True,
    input_cut=CUT,
)


async def hang(_request: ProviderRequest) -> str:
    await asyncio.sleep(3600)
    return "never"


def crash(_request: ProviderRequest) -> str:
    raise RuntimeError("a bug in the provider")


# Each script builds fresh providers, so both paths start from the same state.
SCRIPTS: dict[str, Callable[[], list[Provider]]] = {
    "input_cut_and_truncated": lambda: [FunctionModel.constant(CUT_ANSWER, name="local")],
    "http_error_then_fallback": lambda: [
        FunctionModel.scripted(ProviderHTTPError("remote", 502, "bad gateway"), name="remote"),
        FunctionModel.constant(CUT_ANSWER, name="local"),
    ],
    "prompt_too_long_then_fallback": lambda: [
        FunctionModel.scripted(PromptTooLong("small", "8000 > 4096 tokens"), name="small"),
        FunctionModel.constant("Relais.", name="big"),
    ],
    "timeout_then_fallback": lambda: [
        FunctionModel.scripted(ProviderTimeout("remote", "ReadTimeout"), name="remote"),
        FunctionModel.constant("Relais.", name="local"),
    ],
    "empty_then_fallback": lambda: [
        FunctionModel.constant("", name="mute"),
        FunctionModel.constant("Relais.", name="local"),
    ],
    "crash_then_fallback": lambda: [
        FunctionModel(crash, name="buggy"),
        FunctionModel.constant("Relais.", name="local"),
    ],
}


_SECONDS_LEFT = re.compile(r"\([\d.]+ s left\)")


def _untimed_error(error: str | None) -> str | None:
    return None if error is None else _SECONDS_LEFT.sub("(… s left)", error)


def without_timing(attempt: Attempt) -> Attempt:
    return dataclasses.replace(attempt, duration_ms=0.0, error=_untimed_error(attempt.error))


def record_without_timing(record: LLMCallRecord) -> LLMCallRecord:
    return dataclasses.replace(record, duration_ms=0.0, error=_untimed_error(record.error))


async def ask(
    way: str, providers: list[Provider], deadline_s: float | None = None
) -> tuple[Any, list[LLMCallRecord], list[BreakerSnapshot]]:
    """What one way of asking gives: the Completion (or the failure), the call log, the breakers."""
    recorder = MemoryRecorder()
    runtime = LLMRuntime(providers, recorder)
    call: dict[str, Any] = {"purpose": "writer", "room_id": "room-1", "message_id": "msg-1"}
    result: Any
    try:
        if deadline_s is None:
            result = await _ask(runtime, way, call)
        else:
            with message_deadline(deadline_s):
                result = await _ask(runtime, way, call)
    except AllProvidersFailed as exc:
        result = (
            "all_failed",
            tuple(without_timing(a) for a in exc.attempts),
            exc.skipped,
            exc.timed_out,
        )
    else:
        result = dataclasses.replace(
            result,
            duration_ms=0.0,
            attempts=tuple(without_timing(a) for a in result.attempts),
        )
    records = [record_without_timing(r) for r in recorder.records]
    return result, records, runtime.breakers()


async def _ask(runtime: LLMRuntime, way: str, call: dict[str, Any]) -> Any:
    if way == "complete":
        return await runtime.complete(ASK, **call)
    deltas: list[str] = []
    completion = await runtime.stream(ASK, on_delta=deltas.append, **call)
    assert "".join(deltas).strip() == completion.text  # what was shown is what is returned
    return completion


@pytest.mark.parametrize("script", sorted(SCRIPTS))
async def test_complete_and_stream_give_the_same_completion(script: str) -> None:
    whole = await ask("complete", SCRIPTS[script]())
    streamed = await ask("stream", SCRIPTS[script]())
    assert streamed == whole


async def test_a_cut_input_reaches_the_streamed_completion() -> None:
    completion, _records, _breakers = await ask("stream", SCRIPTS["input_cut_and_truncated"]())
    assert completion.input_cut == CUT
    assert completion.truncated is True
    assert completion.text == "Un résumé coupé"
    assert completion.usage == Usage(input_tokens=95, output_tokens=4)
    assert completion.model == "served-model"


async def test_the_last_resort_out_of_time_gets_the_same_verdict_both_ways() -> None:
    # The only provider ran out of the message's deadline: no verdict on its health (its
    # breaker stays closed), streamed or not.
    whole = await ask("complete", [FunctionModel(hang, name="slow")], deadline_s=0.6)
    streamed = await ask("stream", [FunctionModel(hang, name="slow")], deadline_s=0.6)
    assert streamed == whole
    assert [b.state for b in whole[2]] == ["closed"]
