"""Real models: the bundled Gemma GGUF in-process, and llama.cpp's OpenAI-compatible server.

Kept few and short (small max_tokens, small contexts): CI has 2 cores.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, Field

from eko.llm.providers import LocalLlamaProvider, OpenAICompatProvider, resolve_default_model_path
from eko.llm.providers.local import check_grammar_parses, load_llama
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, ProviderRequest

from .conftest import free_port

pytestmark = pytest.mark.slow

GREETING = (
    ChatMessage("system", "Eko is a friendly assistant who answers in one short sentence."),
    ChatMessage("user", "Hello! What is the capital of France?", name="Alice"),
)
EXTRACT = (
    ChatMessage("system", "Extract the topic the user talks about, as JSON."),
    ChatMessage("user", "I love baking bread on Sundays."),
)
SERVER_START_TIMEOUT_S = 90


class Topic(BaseModel):
    # Bounded strings keep a grammar-constrained answer inside max_tokens.
    topic: str = Field(max_length=20)
    liked: bool


@pytest.fixture(scope="module")
def gguf_path() -> Path:
    return resolve_default_model_path()


@pytest.fixture(scope="module")
async def local_provider(gguf_path: Path) -> AsyncIterator[LocalLlamaProvider]:
    provider = LocalLlamaProvider(gguf_path, n_ctx=512, n_threads=2)
    yield provider
    await provider.aclose()


@pytest.fixture(scope="module")
def llama_server(gguf_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m llama_cpp.server` on a free port; yields its /v1 base URL."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf_path),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "1024",
                "--n_threads",
                "2",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not up: {log_path.read_text()[-2000:]}")
            time.sleep(0.25)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_bundled_gemma_answers_a_plain_prompt(local_provider: LocalLlamaProvider) -> None:
    recorder = MemoryRecorder()
    runtime = LLMRuntime([local_provider], recorder, default_max_tokens=24, default_temperature=0)

    completion = await runtime.complete(GREETING, purpose="test")

    assert completion.text.strip()
    assert "\nAlice:" not in completion.text and "\nEko:" not in completion.text
    assert completion.usage.input_tokens > 10
    assert completion.usage.output_tokens > 0
    assert completion.model == "gemma-3-270m-q4_k_m"
    assert recorder.outcomes == ["ok"]


async def test_bundled_gemma_structured_output_validates(
    local_provider: LocalLlamaProvider,
) -> None:
    recorder = MemoryRecorder()
    runtime = LLMRuntime([local_provider], recorder, default_temperature=0)

    completion = await runtime.complete(EXTRACT, output=Topic, purpose="test", max_tokens=64)

    assert isinstance(completion.data, Topic)
    assert Topic.model_validate_json(completion.text) == completion.data
    assert recorder.outcomes == ["ok"]


def test_an_unparseable_grammar_is_an_error_not_a_crash(gguf_path: Path) -> None:
    from llama_cpp import LlamaGrammar

    llama = load_llama(gguf_path, 256, 1)
    try:
        check_grammar_parses(llama, LlamaGrammar.from_string('root ::= "{" good "}"\ngood ::= "x"'))
        with pytest.raises(ValueError, match="could not parse"):
            # Given to llama.cpp's sampler as is, this grammar segfaults the process.
            check_grammar_parses(llama, LlamaGrammar.from_string(r'root ::= [^"\q]'))
    finally:
        llama.close()  # type: ignore[attr-defined]


async def test_real_openai_compatible_server(llama_server: str) -> None:
    provider = OpenAICompatProvider(
        base_url=llama_server,
        model="gemma",
        name="llama-server",
        timeout_s=60,
        # llama-cpp-python's server only knows {"type": "json_object", "schema": ...}.
        structured_output="json_object",
    )
    try:
        plain = await provider.generate(
            ProviderRequest(messages=GREETING, max_tokens=8, temperature=0)
        )
        assert plain.text.strip()
        assert plain.usage.input_tokens > 0 and plain.usage.output_tokens > 0

        structured = await provider.generate(
            ProviderRequest(
                messages=EXTRACT,
                json_schema=Topic.model_json_schema(),
                max_tokens=64,
                temperature=0,
            )
        )
        assert Topic.model_validate_json(structured.text)
        assert structured.truncated is False
    finally:
        await provider.aclose()


async def test_fallback_from_a_refused_port_to_the_real_server(
    llama_server: str, refused_url: str
) -> None:
    recorder = MemoryRecorder()
    runtime = LLMRuntime(
        [
            OpenAICompatProvider(base_url=refused_url, model="gemma", name="down"),
            OpenAICompatProvider(
                base_url=llama_server,
                model="gemma",
                name="llama-server",
                structured_output="json_object",
            ),
        ],
        recorder,
        default_temperature=0,
    )
    try:
        completion = await runtime.complete(EXTRACT, output=Topic, purpose="test", max_tokens=64)
    finally:
        await runtime.aclose()

    assert isinstance(completion.data, Topic)
    assert completion.provider == "llama-server"
    assert recorder.outcomes == ["error", "fallback"]
    assert [r.provider for r in recorder.records] == ["down", "llama-server"]
