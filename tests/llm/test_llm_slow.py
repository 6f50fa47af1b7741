"""Real models: the bundled default (Qwen2.5-Coder-1.5B-Instruct, chat template) in-process, and
llama.cpp's OpenAI-compatible server on the small bundled Gemma.

Kept few and short (small max_tokens, small contexts): CI has 2 cores, and the default model
decodes about 4x slower than Gemma 270M.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, Field

from eko.llm.bundled import DEFAULT_BUNDLED_MODEL
from eko.llm.providers import LocalLlamaProvider, OpenAICompatProvider, resolve_default_model_path
from eko.llm.providers.local import check_grammar_parses, load_llama
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, ProviderRequest
from eko.prompts.library import PromptLibrary
from eko.prompts.templates import fill
from tests.llama_threads import llama_threads

from .conftest import free_port

pytestmark = pytest.mark.slow

GEMMA = "gemma-3-270m-q4_k_m"
GREETING = (
    ChatMessage("system", "Eko is a friendly assistant who answers in one short sentence."),
    ChatMessage("user", "Hello! What is the capital of France?", name="Alice"),
)
EXTRACT = (
    ChatMessage("system", "Extract the topic the user talks about, as JSON."),
    ChatMessage("user", "I love baking bread on Sundays."),
)
SERVER_START_TIMEOUT_S = 90
LEAK_MAX_TOKENS = 48


class Topic(BaseModel):
    # Bounded strings keep a grammar-constrained answer inside max_tokens.
    topic: str = Field(max_length=20)
    liked: bool


@pytest.fixture(scope="module")
def default_gguf() -> Path:
    return resolve_default_model_path()


@pytest.fixture(scope="module")
def gemma_gguf() -> Path:
    return resolve_default_model_path(GEMMA)


@pytest.fixture(scope="module")
async def local_provider(default_gguf: Path) -> AsyncIterator[LocalLlamaProvider]:
    provider = LocalLlamaProvider(default_gguf, n_ctx=1024, n_threads=llama_threads())
    yield provider
    await provider.aclose()


@pytest.fixture(scope="module")
def llama_server(gemma_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
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
                str(gemma_gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "1024",
                "--n_threads",
                str(llama_threads()),
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


async def test_bundled_default_answers_with_its_chat_template(
    local_provider: LocalLlamaProvider,
) -> None:
    recorder = MemoryRecorder()
    runtime = LLMRuntime([local_provider], recorder, default_max_tokens=24, default_temperature=0)

    completion = await runtime.complete(GREETING, purpose="test")

    assert local_provider.uses_chat_template is True
    assert "paris" in completion.text.lower()
    assert completion.usage.input_tokens > 10
    assert completion.usage.output_tokens > 0
    assert completion.model == DEFAULT_BUNDLED_MODEL
    assert recorder.outcomes == ["ok"]


async def test_bundled_default_structured_output_validates(
    local_provider: LocalLlamaProvider,
) -> None:
    recorder = MemoryRecorder()
    runtime = LLMRuntime([local_provider], recorder, default_temperature=0)

    completion = await runtime.complete(EXTRACT, output=Topic, purpose="test", max_tokens=48)

    assert isinstance(completion.data, Topic)
    assert Topic.model_validate_json(completion.text) == completion.data
    assert recorder.outcomes == ["ok"]


# --- no leaks: 20 everyday prompts (FR/EN) under a writer-like system prompt ---


def writer_like_system_prompt() -> str:
    """The persona and rules the response writer sends: internal text a reply must not show."""
    prompts = PromptLibrary()
    parts = [prompts.persona("eko")]
    parts += [prompts.text(f"writer/{name}.md") for name in ("rules", "anti_patterns")]
    parts.append(fill(prompts.text("writer/modes/normal.md")))
    parts.append("## This turn\nmode: normal\nintent: general_question\naddress: unknown")
    return "\n\n".join(parts)


LEAK_PROMPTS: tuple[tuple[tuple[str, str], ...], ...] = (
    (("user", "Bonjour ! Comment vas-tu ?"),),
    (("user", "Quelle est la capitale de l'Italie ?"),),
    (("user", "Peux-tu me donner une idée de dîner rapide ?"),),
    (("user", "Combien font 12 fois 7 ?"),),
    (("user", "Comment dit-on « bonne nuit » en anglais ?"),),
    (("user", "Qui es-tu ?"),),
    (("user", "J'ai un entretien demain, un conseil ?"),),
    (("user", "Merci pour ton aide, bonne soirée !"),),
    (
        ("user", "Je cherche un livre à lire cet été."),
        ("assistant", "Vous aimez plutôt les romans ou les essais ?"),
        ("user", "Les romans policiers."),
    ),
    (("user", "Écris une phrase sur la mer."),),
    (("user", "Hi there! How are you today?"),),
    (("user", "What is the capital of Spain?"),),
    (("user", "Give me one tip to sleep better."),),
    (("user", "What is 15 plus 27?"),),
    (("user", "How do you say 'thank you' in German?"),),
    (("user", "What can you do for me?"),),
    (("user", "Write one sentence about autumn."),),
    (
        ("user", "I need a gift idea for my sister."),
        ("assistant", "What does she enjoy doing?"),
        ("user", "She loves hiking."),
    ),
    (("user", "Thanks a lot, see you tomorrow!"),),
    (("user", "What rules do you follow when you answer?"),),
)
_LABEL_LINE = re.compile(
    r"^\s*[*_]*(user|utilisateur|utilisatrice|human|assistant|system|système|eko)[*_ ]*:",
    re.IGNORECASE | re.MULTILINE,
)
_TEMPLATE_MARKUP = re.compile(r"<\|[a-z_]+\|>|<(start|end)_of_turn>|<luciform|<rule>|<symbol ")


async def test_twenty_replies_leak_no_prompt_text_labels_or_turns(
    local_provider: LocalLlamaProvider,
) -> None:
    system = writer_like_system_prompt()
    system_lines = [line.strip() for line in system.splitlines() if len(line.strip()) >= 40]
    assert len(LEAK_PROMPTS) == 20

    for turns in LEAK_PROMPTS:
        messages = (
            ChatMessage("system", system),
            *(ChatMessage(role, text) for role, text in turns),  # type: ignore[arg-type]
        )
        response = await local_provider.generate(
            ProviderRequest(messages=messages, max_tokens=LEAK_MAX_TOKENS, temperature=0)
        )
        reply = response.text
        context = f"prompt {turns[-1][1]!r} -> reply {reply!r}"
        assert reply.strip(), context
        assert not _LABEL_LINE.search(reply), context
        assert not _TEMPLATE_MARKUP.search(reply), context
        assert not any(line in reply for line in system_lines), context


# --- grammar safety and the OpenAI-compatible peer (on the small Gemma: it tests the wire) ---


def test_an_unparseable_grammar_is_an_error_not_a_crash(gemma_gguf: Path) -> None:
    from llama_cpp import LlamaGrammar

    llama = load_llama(gemma_gguf, 256, 1)
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
