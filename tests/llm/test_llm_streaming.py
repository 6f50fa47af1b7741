"""Streaming: providers' deltas, the runtime's fallback rule, stops, and the display hold-back."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from eko.llm.errors import AllProvidersFailed, ProviderHTTPError, ProviderUnavailable
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.sanitize import sanitize_reply
from eko.llm.stream_text import StablePrefix, sanitizer_tail
from eko.llm.streaming import StreamInterrupted
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse

from .fake_llama import FakeLlama, Loader

CHAT = (ChatMessage("system", "You are Eko."), ChatMessage("user", "Salut"))
REQUEST = ProviderRequest(messages=CHAT, max_tokens=32)


async def collect(provider: Any, request: ProviderRequest = REQUEST) -> tuple[list[str], Any]:
    deltas: list[str] = []
    final = None
    async for item in provider.stream(request):
        if isinstance(item, ProviderResponse):
            final = item
        else:
            deltas.append(item)
    return deltas, final


# --- FunctionModel ---


async def test_function_model_streams_words_then_the_response() -> None:
    deltas, final = await collect(FunctionModel.constant("Bonjour, je suis Eko."))
    assert deltas == ["Bonjour,", " je", " suis", " Eko."]
    assert final.text == "Bonjour, je suis Eko."


async def test_function_model_scripted_failure_after_n_deltas() -> None:
    model = FunctionModel.constant(Deltas(("a", "b", "c"), fail_after=2))
    seen: list[str] = []
    with pytest.raises(Exception, match="stream broken"):
        async for item in model.stream(REQUEST):
            seen.append(str(item))
    assert seen == ["a", "b"]


# --- runtime ---


async def test_runtime_stream_hands_out_deltas_and_records_one_call(
    recorder: MemoryRecorder,
) -> None:
    runtime = LLMRuntime([FunctionModel.constant(Deltas(("Bon", "jour", " !")))], recorder)
    deltas: list[str] = []
    completion = await runtime.stream(CHAT, on_delta=deltas.append, purpose="writer")
    assert deltas == ["Bon", "jour", " !"]
    assert completion.text == "Bonjour !" and completion.provider == "function"
    assert recorder.outcomes == ["ok"]
    assert recorder.records[0].purpose == "writer"


async def test_failure_before_the_first_delta_falls_back_silently(
    recorder: MemoryRecorder,
) -> None:
    first = FunctionModel.constant(Deltas(("x",), fail_after=0), name="first")
    second = FunctionModel.constant("Relais.", name="second")
    runtime = LLMRuntime([first, second], recorder)
    deltas: list[str] = []
    completion = await runtime.stream(CHAT, on_delta=deltas.append, purpose="writer")
    assert deltas == ["Relais."]
    assert completion.provider == "second" and completion.fallback_used
    assert recorder.outcomes == ["error", "fallback"]


async def test_failure_mid_stream_ends_with_the_partial_text(recorder: MemoryRecorder) -> None:
    first = FunctionModel.constant(Deltas(("Une ", "réponse ", "coupée"), fail_after=2))
    second = FunctionModel.constant("never asked", name="second")
    runtime = LLMRuntime([first, second], recorder)
    deltas: list[str] = []
    with pytest.raises(StreamInterrupted) as caught:
        await runtime.stream(CHAT, on_delta=deltas.append, purpose="writer")
    assert caught.value.partial == "Une réponse " == "".join(deltas)
    assert second.requests == []  # never a second answer after one began
    assert recorder.outcomes == ["error"]


async def test_no_provider_begins_an_answer(recorder: MemoryRecorder) -> None:
    runtime = LLMRuntime(
        [FunctionModel.scripted(ProviderUnavailable("function", "down"))], recorder
    )
    with pytest.raises(AllProvidersFailed):
        await runtime.stream(CHAT, on_delta=lambda _d: None, purpose="writer")
    assert recorder.outcomes == ["error"]


async def test_cancelling_stops_the_stream_and_records_the_attempt(
    recorder: MemoryRecorder,
) -> None:
    model = FunctionModel.constant(Deltas(tuple("abcdefghij"), delay_s=0.05))
    runtime = LLMRuntime([model], recorder)
    deltas: list[str] = []
    task = asyncio.create_task(runtime.stream(CHAT, on_delta=deltas.append, purpose="writer"))
    for _ in range(500):  # until two deltas are out
        if len(deltas) >= 2:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 2 <= len(deltas) < 10
    assert recorder.outcomes == ["error"]
    assert "stopped by the caller" in (recorder.records[0].error or "")


# --- OpenAI-compatible upstream ---


def sse(*chunks: dict[str, Any], done: bool = True) -> bytes:
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {"model": "up-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def test_openai_compat_reads_the_upstream_stream() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        body = sse(
            chunk(""),
            chunk("Bon"),
            chunk("jour"),
            chunk(finish="length"),
            {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}},
        )
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    provider = OpenAICompatProvider(
        base_url="http://up/v1", model="m", transport=httpx.MockTransport(handler)
    )
    deltas, final = await collect(provider)
    assert sent[0]["stream"] is True and sent[0]["stream_options"] == {"include_usage": True}
    assert deltas == ["Bon", "jour"]
    assert final.text == "Bonjour" and final.model == "up-1" and final.truncated
    assert (final.usage.input_tokens, final.usage.output_tokens) == (9, 2)
    await provider.aclose()


async def test_openai_compat_stream_errors() -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="overloaded")

    provider = OpenAICompatProvider(
        base_url="http://up/v1", model="m", transport=httpx.MockTransport(refused)
    )
    with pytest.raises(ProviderHTTPError, match="503"):
        await collect(provider)

    def broken(request: httpx.Request) -> httpx.Response:
        body = sse(chunk("Bon"), done=False) + b"data: {not json\n\n"
        return httpx.Response(200, content=body)

    provider = OpenAICompatProvider(
        base_url="http://up/v1", model="m", transport=httpx.MockTransport(broken)
    )
    runtime = LLMRuntime([provider])
    deltas: list[str] = []
    with pytest.raises(StreamInterrupted) as caught:
        await runtime.stream(CHAT, on_delta=deltas.append, purpose="writer")
    assert caught.value.partial == "Bon" and "malformed stream chunk" in caught.value.error
    await runtime.aclose()


# --- local llama.cpp ---


class StreamingLlama(FakeLlama):
    """FakeLlama that streams its text one piece at a time when asked (stream=True)."""

    def __init__(self, pieces: list[str], *, piece_delay: float = 0.0) -> None:
        super().__init__()
        self.pieces = pieces
        self.piece_delay = piece_delay
        self.streamed = 0

    def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
        if not kwargs.pop("stream", False):
            return super().create_completion(prompt, **kwargs)
        self.calls.append((prompt, kwargs))
        return self._chunks(kwargs)

    def _chunks(self, kwargs: dict[str, Any]) -> Any:
        self.threads.add(threading.get_ident())
        for piece in self.pieces:
            if kwargs["stopping_criteria"](None, None):
                return
            time.sleep(self.piece_delay)
            self.streamed += 1
            yield {"choices": [{"text": piece, "finish_reason": None}]}
        yield {"choices": [{"text": "", "finish_reason": "stop"}]}


def local(tmp_path: Path, llama: FakeLlama) -> LocalLlamaProvider:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    return LocalLlamaProvider(path, n_ctx=512, n_threads=1, loader=Loader(llama))


async def test_local_stream_holds_back_what_the_sanitizer_cuts(tmp_path: Path) -> None:
    pieces = [" Eko", ":", " Bonjour", " Alice", " !", "\n", "Us", "er", ":", " merci"]
    provider = local(tmp_path, StreamingLlama(pieces))
    deltas, final = await collect(provider)
    # Neither the model's own label nor the invented next turn is ever shown.
    assert "".join(deltas) == "Bonjour Alice !" == final.text
    assert final.usage.output_tokens == len(pieces)
    assert all(not d.startswith("Eko") for d in deltas) and len(deltas) >= 2


async def test_local_stream_stop_ends_generation_and_frees_the_model(tmp_path: Path) -> None:
    llama = StreamingLlama([f" mot{i}" for i in range(200)], piece_delay=0.01)
    provider = local(tmp_path, llama)
    stream = provider.stream(REQUEST)
    first = await anext(stream)
    assert isinstance(first, str)
    await stream.aclose()  # the caller stopped
    # The gate is free again and the next generation runs (after the stopped one ended).
    response = await asyncio.wait_for(provider.generate(ProviderRequest(messages=CHAT)), timeout=5)
    assert response.text
    assert llama.streamed < 200
    await provider.aclose()


@pytest.mark.parametrize(
    "raw",
    [
        "Bonjour !\nUser: et toi ?",
        "<|im_start|>assistant\nSalut <|im_end|> reste",
        "Eko : Voilà la réponse.\nVous êtes Eko, un assistant qui répond brièvement.",
        "Assistant:\nD'accord [INST] suite",
    ],
)
def test_stable_prefix_never_shows_what_is_cut_later(raw: str) -> None:
    system = "Vous êtes Eko, un assistant qui répond brièvement."

    def clean(text: str) -> str:
        return sanitize_reply(text, assistant_name="Eko", prompt_texts=[system])

    display = StablePrefix(clean, sanitizer_tail("Eko", prompt_texts=[system]))
    shown = "".join(display.feed(char) for char in raw)
    assert clean(raw).startswith(shown)
    assert shown == clean(raw) or len(shown) >= len(clean(raw)) - 12
