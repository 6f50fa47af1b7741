"""LLMRuntime: ordered fallback, structured output with one re-ask, and the call log."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from eko.llm.correction import CORRECTION_MESSAGE
from eko.llm.errors import (
    AllProvidersFailed,
    InvalidOutput,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.providers.function import FunctionModel
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, LLMCallRecord, ProviderRequest, ProviderResponse, Usage

ASK = [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hi", name="Alice")]


class Intent(BaseModel):
    confidence: float = Field(ge=0, le=1)
    decision: str = Field(max_length=40)


GOOD_INTENT = '{"confidence": 0.92, "decision": "answer"}'


class BrokenRecorder:
    """A CallRecorder whose store is down."""

    def __init__(self) -> None:
        self.calls = 0

    async def record(self, call: LLMCallRecord) -> None:
        self.calls += 1
        raise RuntimeError("database is locked")


def chat_body(content: str | None, *, finish_reason: str = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "model": "served-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        **extra,
    }


def openai_provider(handler: Any, name: str = "remote") -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url="http://gateway.test/v1",
        model="gpt-test",
        name=name,
        transport=httpx.MockTransport(handler),
    )


async def test_first_provider_answers(recorder: MemoryRecorder) -> None:
    primary = FunctionModel.constant("Hi Alice!", name="primary", model="m1")
    backup = FunctionModel.constant("unused", name="backup")
    runtime = LLMRuntime([primary, backup], recorder)

    completion = await runtime.complete(ASK, purpose="writer", room_id="room-1", message_id="msg-1")

    assert completion.text == "Hi Alice!"
    assert completion.data is None
    assert (completion.provider, completion.model) == ("primary", "m1")
    assert completion.fallback_used is False
    assert [a.outcome for a in completion.attempts] == ["ok"]
    assert backup.requests == []
    [record] = recorder.records
    assert (record.purpose, record.provider, record.model, record.outcome) == (
        "writer",
        "primary",
        "m1",
        "ok",
    )
    assert (record.room_id, record.message_id, record.error) == ("room-1", "msg-1", None)
    assert record.input_tokens > 0 and record.output_tokens == 2
    assert record.prompt is None  # prompts hold user data: only with debug dumps


async def test_request_carries_defaults_and_overrides() -> None:
    model = FunctionModel.constant("ok")
    runtime = LLMRuntime(
        [model], None, default_max_tokens=77, default_temperature=0.3, assistant_name="Lisa"
    )

    await runtime.complete(ASK, purpose="writer")
    await runtime.complete(ASK, purpose="writer", max_tokens=5, temperature=0.0, stop=["\n\n"])

    first, second = model.requests
    assert (first.max_tokens, first.temperature, first.stop) == (77, 0.3, ())
    assert first.assistant_name == "Lisa"
    assert first.json_schema is None
    assert first.messages == tuple(ASK)
    assert (second.max_tokens, second.temperature, second.stop) == (5, 0.0, ("\n\n",))


async def test_fallback_on_connection_refused(recorder: MemoryRecorder, refused_url: str) -> None:
    refused = OpenAICompatProvider(base_url=refused_url, model="gpt-test", name="remote")
    backup = FunctionModel.constant("from backup", name="backup")
    runtime = LLMRuntime([refused, backup], recorder)

    completion = await runtime.complete(ASK, purpose="writer")

    assert completion.text == "from backup"
    assert completion.provider == "backup"
    assert completion.fallback_used is True
    assert recorder.outcomes == ["error", "fallback"]
    assert recorder.records[0].provider == "remote"
    assert "ConnectError" in (recorder.records[0].error or "")
    await runtime.aclose()


async def test_fallback_on_http_500(recorder: MemoryRecorder) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="upstream exploded " + "x" * 1000)

    runtime = LLMRuntime(
        [openai_provider(handler), FunctionModel.constant("fine", name="backup")], recorder
    )

    completion = await runtime.complete(ASK, purpose="intent")

    assert completion.provider == "backup"
    assert recorder.outcomes == ["error", "fallback"]
    error = recorder.records[0].error or ""
    assert "HTTP 500" in error and "upstream exploded" in error
    assert len(error) < 300  # only an excerpt of the body


async def test_fallback_on_timeout(recorder: MemoryRecorder) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    slow_function = FunctionModel.scripted(ProviderTimeout("slow", "no answer in 5s"), name="slow")
    runtime = LLMRuntime(
        [openai_provider(handler), slow_function, FunctionModel.constant("late but here")],
        recorder,
    )

    completion = await runtime.complete(ASK, purpose="writer")

    assert completion.text == "late but here"
    assert recorder.outcomes == ["error", "error", "fallback"]
    assert "ReadTimeout" in (recorder.records[0].error or "")
    assert [a.provider for a in completion.attempts] == ["remote", "slow", "function"]


async def test_invalid_json_is_reasked_once_then_falls_back(recorder: MemoryRecorder) -> None:
    stubborn = FunctionModel.constant("I think the answer is yes.", name="stubborn")
    backup = FunctionModel.constant(GOOD_INTENT, name="backup")
    runtime = LLMRuntime([stubborn, backup], recorder)

    completion = await runtime.complete(ASK, output=Intent, purpose="intent")

    assert completion.data == Intent(confidence=0.92, decision="answer")
    assert completion.provider == "backup"
    assert recorder.outcomes == ["invalid", "invalid", "fallback"]
    assert [r.provider for r in recorder.records] == ["stubborn", "stubborn", "backup"]
    assert all("Invalid JSON" in (r.error or "") for r in recorder.records[:2])
    # The re-ask shows the model its bad answer and what was wrong with it.
    first, second = stubborn.requests
    assert first.json_schema == Intent.model_json_schema()
    assert second.messages[: len(ASK)] == tuple(ASK)
    bad, correction = second.messages[len(ASK) :]
    assert bad == ChatMessage("assistant", "I think the answer is yes.")
    assert correction.role == "user"
    assert "Invalid JSON" in correction.content
    assert correction.content.startswith(CORRECTION_MESSAGE.split("{error}")[0])
    # The next provider starts from the original conversation, not the correction.
    assert backup.requests[0].messages == tuple(ASK)


async def test_validation_succeeds_after_reask_on_same_provider(recorder: MemoryRecorder) -> None:
    model = FunctionModel.scripted(
        '{"confidence": 1.7, "decision": "answer"}', f"```json\n{GOOD_INTENT}\n```", name="p1"
    )
    backup = FunctionModel.constant(GOOD_INTENT, name="backup")
    runtime = LLMRuntime([model, backup], recorder)

    completion = await runtime.complete(ASK, output=Intent, purpose="intent")

    assert completion.provider == "p1"
    assert completion.data is not None and completion.data.confidence == 0.92
    assert recorder.outcomes == ["invalid", "fallback"]
    assert "confidence: Input should be less than or equal to 1" in (
        recorder.records[0].error or ""
    )
    assert "confidence" in model.requests[1].messages[-1].content
    assert backup.requests == []


async def test_all_providers_failed(recorder: MemoryRecorder) -> None:
    runtime = LLMRuntime(
        [
            FunctionModel.scripted(ProviderUnavailable("a", "connection refused"), name="a"),
            FunctionModel.scripted(ProviderHTTPError("b", 429, "rate limited"), name="b"),
            FunctionModel.scripted(InvalidOutput("c", "malformed body"), name="c"),
        ],
        recorder,
    )

    with pytest.raises(AllProvidersFailed) as caught:
        await runtime.complete(ASK, purpose="writer")

    attempts = caught.value.attempts
    assert [(a.provider, a.outcome) for a in attempts] == [
        ("a", "error"),
        ("b", "error"),
        ("c", "invalid"),
    ]
    assert recorder.outcomes == ["error", "error", "invalid"]
    assert "HTTP 429" in str(caught.value)


async def test_all_fail_structured_counts_every_attempt(recorder: MemoryRecorder) -> None:
    runtime = LLMRuntime(
        [FunctionModel.constant("nope", name="a"), FunctionModel.constant("{}", name="b")],
        recorder,
    )
    with pytest.raises(AllProvidersFailed) as caught:
        await runtime.complete(ASK, output=Intent, purpose="intent")
    assert [(a.provider, a.outcome) for a in caught.value.attempts] == [
        ("a", "invalid"),
        ("a", "invalid"),
        ("b", "invalid"),
        ("b", "invalid"),
    ]


async def test_empty_answer_falls_back(recorder: MemoryRecorder) -> None:
    runtime = LLMRuntime(
        [FunctionModel.constant("  \n ", name="mute"), FunctionModel.constant("hello")], recorder
    )
    completion = await runtime.complete(ASK, purpose="writer")
    assert completion.text == "hello"
    assert recorder.outcomes == ["invalid", "fallback"]
    assert recorder.records[0].error == "empty answer"


async def test_a_crashing_provider_does_not_take_the_answer_down(
    recorder: MemoryRecorder,
) -> None:
    def crash(request: ProviderRequest) -> str:
        raise KeyError("bug in a provider")

    runtime = LLMRuntime(
        [FunctionModel(crash, name="buggy"), FunctionModel.constant("ok")], recorder
    )
    completion = await runtime.complete(ASK, purpose="writer")
    assert completion.text == "ok"
    assert recorder.outcomes == ["error", "fallback"]
    assert "KeyError" in (recorder.records[0].error or "")


async def test_recorder_failure_is_tolerated() -> None:
    broken_recorder = BrokenRecorder()
    runtime = LLMRuntime(
        [
            FunctionModel.scripted(ProviderTimeout("a", "slow"), name="a"),
            FunctionModel.constant("ok"),
        ],
        broken_recorder,
    )
    completion = await runtime.complete(ASK, purpose="writer")
    assert completion.text == "ok"
    assert broken_recorder.calls == 2  # both attempts were tried, both writes failed


async def test_truncated_flag_from_provider(recorder: MemoryRecorder) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, json=chat_body("a long answer that was cu", finish_reason="length")
        )

    runtime = LLMRuntime([openai_provider(handler)], recorder)
    completion = await runtime.complete(ASK, purpose="writer")
    assert completion.truncated is True
    assert completion.text == "a long answer that was cu"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (11, 3)
    assert completion.model == "served-model"
    assert recorder.records[0].model == "served-model"


async def test_not_truncated_by_default() -> None:
    full = ProviderResponse(text="done", usage=Usage(1, 1), model="m")
    runtime = LLMRuntime([FunctionModel(lambda request: full)])
    assert (await runtime.complete(ASK, purpose="writer")).truncated is False


async def test_truncated_json_falls_back_without_a_reask(recorder: MemoryRecorder) -> None:
    cut = ProviderResponse(
        text='{"confidence": 0.9, "deci', usage=Usage(5, 8), model="m", truncated=True
    )
    short = FunctionModel(lambda request: cut, name="short")
    runtime = LLMRuntime([short, FunctionModel.constant(GOOD_INTENT, name="backup")], recorder)

    completion = await runtime.complete(ASK, output=Intent, purpose="intent")

    assert completion.data is not None and completion.provider == "backup"
    # The same budget would cut the answer again: no re-ask, straight to the next provider.
    assert len(short.requests) == 1
    assert recorder.outcomes == ["invalid", "fallback"]
    assert "truncated at max_tokens" in (recorder.records[0].error or "")
    assert recorder.records[0].output_tokens == 8  # a failed answer still cost tokens


async def test_structured_output_through_openai_wire(recorder: MemoryRecorder) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=chat_body(GOOD_INTENT))

    runtime = LLMRuntime([openai_provider(handler)], recorder)
    completion = await runtime.complete(ASK, output=Intent, purpose="intent")

    assert completion.data == Intent(confidence=0.92, decision="answer")
    response_format = seen[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Intent"
    assert response_format["json_schema"]["strict"] is False
    assert response_format["json_schema"]["schema"] == Intent.model_json_schema()
    assert recorder.outcomes == ["ok"]


async def test_prompt_dump_only_when_enabled(recorder: MemoryRecorder) -> None:
    runtime = LLMRuntime([FunctionModel.constant("ok")], recorder, debug_dump_prompts=True)
    await runtime.complete(ASK, output=None, purpose="writer")
    prompt = recorder.records[0].prompt or ""
    assert "[system]\nBe brief." in prompt
    assert "[user(Alice)]\nSay hi" in prompt


async def test_runtime_needs_a_provider() -> None:
    with pytest.raises(ValueError):
        LLMRuntime([], None)


async def test_aclose_closes_every_provider() -> None:
    first, second = FunctionModel.constant("a"), FunctionModel.constant("b")
    await LLMRuntime([first, second]).aclose()
    assert first.closed and second.closed
