"""Both sides of the protocol real: llama.cpp's own server (llama-cpp-python[server]) serving a
bundled model as Eko's provider, and the official openai client talking to a running Eko;
plus the in-process local model streaming its tokens."""

from __future__ import annotations

import time
from pathlib import Path

import openai
import pytest

from eko.llm.errors import InvalidOutput
from eko.llm.providers import FunctionModel, LocalLlamaProvider, OpenAICompatProvider
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse
from tests.chat.helpers import orchestrator_json
from tests.llama_threads import llama_threads
from tests.llm.test_llm_slow import gemma_gguf, llama_server  # noqa: F401

from .live_server import running_eko

pytestmark = pytest.mark.slow


def router_only() -> FunctionModel:
    """Answers the orchestrator's JSON; refuses plain text before any token, so the writer
    falls back (silently, as the runtime's rule says) to the next provider."""

    def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return orchestrator_json("small_talk")
        # Garbage counts towards its breaker, but the JSON it gives between two refusals resets
        # the count: its circuit stays closed for the next JSON.
        raise InvalidOutput("router-only", "writes no replies")

    return FunctionModel(answer, name="router-only")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_openai_client_against_eko_served_by_llama_cpp(
    database_url: str,
    llama_server: str,  # noqa: F811
) -> None:
    upstream = OpenAICompatProvider(
        base_url=llama_server, model="gemma", name="llama-server", timeout_s=120
    )
    # A short reply: it comes from a 270M model on a shared 2-core machine.
    with running_eko(database_url, [router_only(), upstream], llm_max_tokens=16) as eko:
        api = openai.OpenAI(base_url=f"{eko.url}/v1", api_key=eko.key, max_retries=0, timeout=300)
        whole = api.chat.completions.create(
            model="eko", messages=[{"role": "user", "content": "Bonjour, qui es-tu ?"}]
        )
        assert whole.choices[0].message.content
        assert whole.usage is not None and whole.usage.prompt_tokens > 0

        # A tiny base model may now and then say nothing at all: a few tries at most.
        for _ in range(3):
            chunks = list(
                api.chat.completions.create(
                    model="eko",
                    messages=[{"role": "user", "content": "Dis-moi une chose sur la mer."}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            pieces = [c.choices[0].delta.content for c in chunks if c.choices]
            if sum(1 for piece in pieces if piece) > 1:
                break
        assert sum(1 for piece in pieces if piece) > 1, pieces  # tokens as they came
        usage = chunks[-1].usage
        assert usage is not None and usage.completion_tokens > 0


async def test_the_local_model_streams_its_tokens(gemma_gguf: Path) -> None:  # noqa: F811
    provider = LocalLlamaProvider(gemma_gguf, n_ctx=512, n_threads=llama_threads())
    request = ProviderRequest(
        messages=(
            ChatMessage("system", "Tu es Eko, un assistant bref."),
            ChatMessage("user", "Raconte une très courte histoire de chat."),
        ),
        max_tokens=16,
    )
    started = time.perf_counter()
    first_at = None
    deltas: list[str] = []
    final = None
    try:
        async for item in provider.stream(request):
            if isinstance(item, ProviderResponse):
                final = item
            else:
                first_at = first_at or time.perf_counter()
                deltas.append(item)
    finally:
        await provider.aclose()
    ended = time.perf_counter()
    assert final is not None and final.text
    assert len(deltas) > 3 and first_at is not None
    assert first_at - started < ended - started  # the first token came before the whole reply
    assert final.text.startswith("".join(deltas).strip()[:20])
