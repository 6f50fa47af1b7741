"""LocalLlamaProvider with a fake llama.cpp: prompt, stops, grammar, loading, serialisation."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eko.llm.errors import InvalidOutput, PromptTooLong, ProviderTimeout, ProviderUnavailable
from eko.llm.providers.local import LocalLlamaProvider, json_schema_grammar
from eko.llm.types import ChatMessage, ProviderRequest

CHAT = (
    ChatMessage("system", "You are Eko."),
    ChatMessage("user", "Salut", name="Alice"),
)


def completion(text: str = " Bonjour Alice !", finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "choices": [{"text": text, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 17, "completion_tokens": 4, "total_tokens": 21},
    }


class FakeLlama:
    def __init__(self, result: Any = None, *, delay: float = 0.0) -> None:
        self.result = result if result is not None else completion()
        self.delay = delay
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.active = 0
        self.max_active = 0
        self.threads: set[int] = set()
        self.closed = False
        self._guard = threading.Lock()

    def create_completion(self, prompt: str, **kwargs: Any) -> Any:
        with self._guard:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self.threads.add(threading.get_ident())
        try:
            self.calls.append((prompt, kwargs))
            deadline = time.monotonic() + self.delay
            # Like llama.cpp, consult the stopping criteria between tokens.
            while time.monotonic() < deadline:
                if kwargs["stopping_criteria"](None, None):
                    return completion("cancel", finish_reason="stop")
                time.sleep(0.005)
            if isinstance(self.result, Exception):
                raise self.result
            return self.result
        finally:
            with self._guard:
                self.active -= 1

    def close(self) -> None:
        self.closed = True


class Loader:
    def __init__(self, llama: FakeLlama) -> None:
        self.llama = llama
        self.loads: list[tuple[Path, int, int]] = []

    def __call__(self, path: Path, n_ctx: int, n_threads: int) -> FakeLlama:
        self.loads.append((path, n_ctx, n_threads))
        return self.llama


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF")
    return path


def make(gguf: Path, llama: FakeLlama, **kwargs: Any) -> tuple[LocalLlamaProvider, Loader]:
    loader = Loader(llama)
    grammar_factory = kwargs.pop("grammar_factory", lambda schema, llama: ("grammar", schema))
    provider = LocalLlamaProvider(
        gguf, n_ctx=512, n_threads=2, loader=loader, grammar_factory=grammar_factory, **kwargs
    )
    return provider, loader


async def test_renders_transcript_and_stops_on_turn_markers(gguf: Path) -> None:
    llama = FakeLlama()
    provider, loader = make(gguf, llama)

    response = await provider.generate(
        ProviderRequest(messages=CHAT, max_tokens=40, temperature=0.1, stop=("###",))
    )

    prompt, options = llama.calls[0]
    assert prompt == "You are Eko.\n\nAlice: Salut\nEko:"
    assert options["stop"] == ["\nUser:", "\nEko:", "\nAlice:", "###"]
    assert (options["max_tokens"], options["temperature"]) == (40, 0.1)
    assert "grammar" not in options
    assert response.text == "Bonjour Alice !"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (17, 4)
    assert response.model == "tiny-model"
    assert response.truncated is False
    assert loader.loads == [(gguf, 512, 2)]
    await provider.aclose()
    assert llama.closed


async def test_assistant_name_from_request(gguf: Path) -> None:
    llama = FakeLlama()
    provider, _ = make(gguf, llama)
    await provider.generate(ProviderRequest(messages=CHAT, assistant_name="Lisa"))
    prompt, options = llama.calls[0]
    assert prompt.endswith("\nLisa:")
    assert "\nLisa:" in options["stop"]
    await provider.aclose()


async def test_json_schema_uses_a_cached_grammar_and_no_turn_stops(gguf: Path) -> None:
    built: list[str] = []

    def grammar_factory(schema_json: str, model: object) -> object:
        assert model is llama  # compiled against the loaded model
        built.append(schema_json)
        return object()

    llama = FakeLlama(completion('{"a": 1}'))
    provider, _ = make(gguf, llama, grammar_factory=grammar_factory)
    request = ProviderRequest(messages=CHAT, json_schema={"type": "object"}, stop=("###",))

    await provider.generate(request)
    await provider.generate(request)

    assert built == ['{"type": "object"}']  # compiled once
    first, second = (options for _, options in llama.calls)
    assert first["grammar"] is second["grammar"]
    # A turn marker inside a JSON string must not cut the object.
    assert first["stop"] == ["###"]
    await provider.aclose()


async def test_grammar_keeps_the_schema_property_order(gguf: Path) -> None:
    built: list[str] = []
    provider, _ = make(
        gguf, FakeLlama(completion("{}")), grammar_factory=lambda schema, _: built.append(schema)
    )
    schema = {"type": "object", "properties": {"reasoning": {}, "answer": {}}}
    await provider.generate(ProviderRequest(messages=CHAT, json_schema=schema))
    assert built[0].index("reasoning") < built[0].index("answer")
    await provider.aclose()


def test_json_strings_exclude_raw_control_characters() -> None:
    schema = '{"type": "object", "properties": {"s": {"type": "string", "maxLength": 8}}}'
    rules = json_schema_grammar(schema, FakeLlama())._grammar.splitlines()
    [char_rule] = [rule for rule in rules if rule.startswith("char ::=")]
    # A raw newline inside a string is not JSON; llama.cpp's own JSON grammar excludes it.
    assert char_rule.startswith(r'char ::= [^"\\\x7F\x00-\x1F] |')


async def test_unsupported_schema_is_invalid_output(gguf: Path) -> None:
    # The real converter (it asserts on schemas it does not know) with a fake model.
    provider, _ = make(gguf, FakeLlama(), grammar_factory=json_schema_grammar)
    with pytest.raises(InvalidOutput, match="schema not supported"):
        await provider.generate(ProviderRequest(messages=CHAT, json_schema={"type": "weird"}))
    await provider.aclose()


async def test_length_finish_reason_means_truncated(gguf: Path) -> None:
    provider, _ = make(gguf, FakeLlama(completion(" Bonjour", finish_reason="length")))
    response = await provider.generate(ProviderRequest(messages=CHAT, max_tokens=2))
    assert response.truncated is True
    await provider.aclose()


async def test_loads_lazily_once(gguf: Path) -> None:
    provider, loader = make(gguf, FakeLlama())
    assert not provider.loaded and loader.loads == []
    await provider.load()
    await provider.load()
    await provider.generate(ProviderRequest(messages=CHAT))
    assert provider.loaded and len(loader.loads) == 1
    await provider.aclose()
    assert not provider.loaded
    # Closed is not dead: the next call loads the model again.
    await provider.generate(ProviderRequest(messages=CHAT))
    assert provider.loaded and len(loader.loads) == 2
    await provider.aclose()


async def test_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    provider, loader = make(tmp_path / "nope.gguf", FakeLlama())
    with pytest.raises(ProviderUnavailable, match="model file not found"):
        await provider.generate(ProviderRequest(messages=CHAT))
    assert loader.loads == []
    await provider.aclose()


async def test_missing_bundled_model_is_unavailable() -> None:
    def no_package() -> Path:
        raise FileNotFoundError("gemma package not installed")

    provider = LocalLlamaProvider(None, loader=Loader(FakeLlama()), resolve_default=no_package)
    assert provider.model == "gemma-3-270m-q4_k_m"
    with pytest.raises(ProviderUnavailable, match="gemma package not installed"):
        await provider.load()
    await provider.aclose()


async def test_default_model_path_is_resolved_on_first_use(gguf: Path) -> None:
    resolved: list[int] = []

    def resolve() -> Path:
        resolved.append(1)
        return gguf

    loader = Loader(FakeLlama())
    provider = LocalLlamaProvider(None, loader=loader, resolve_default=resolve)
    assert resolved == []
    await provider.generate(ProviderRequest(messages=CHAT))
    assert resolved == [1] and loader.loads[0][0] == gguf
    assert provider.model_path == gguf and provider.model == "tiny-model"
    await provider.aclose()


async def test_unloadable_file_is_unavailable(gguf: Path) -> None:
    def broken_loader(path: Path, n_ctx: int, n_threads: int) -> FakeLlama:
        raise ValueError(f"Failed to load model from file: {path}")

    provider = LocalLlamaProvider(gguf, loader=broken_loader)
    with pytest.raises(ProviderUnavailable, match=r"cannot load tiny-model\.gguf"):
        await provider.generate(ProviderRequest(messages=CHAT))
    await provider.aclose()


async def test_prompt_longer_than_context(gguf: Path) -> None:
    overflow = ValueError("Requested tokens (900) exceed context window of 512")
    provider, _ = make(gguf, FakeLlama(overflow))
    with pytest.raises(PromptTooLong):
        await provider.generate(ProviderRequest(messages=CHAT))
    await provider.aclose()


async def test_calls_are_serialised_on_one_thread(gguf: Path) -> None:
    llama = FakeLlama(delay=0.05)
    provider, _ = make(gguf, llama)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(10):
            await asyncio.sleep(0.01)
            ticks += 1

    await asyncio.gather(
        *(provider.generate(ProviderRequest(messages=CHAT)) for _ in range(4)), ticker()
    )

    assert len(llama.calls) == 4
    assert llama.max_active == 1
    assert len(llama.threads) == 1 and threading.get_ident() not in llama.threads
    assert ticks == 10  # the event loop kept running while the model worked
    await provider.aclose()


async def test_timeout_stops_generation_and_frees_the_model(gguf: Path) -> None:
    llama = FakeLlama(delay=5.0)
    provider, _ = make(gguf, llama, timeout_s=0.1)

    started = time.monotonic()
    with pytest.raises(ProviderTimeout):
        await provider.generate(ProviderRequest(messages=CHAT))
    # The stopping criterion ends the abandoned generation; the next call is not stuck behind it.
    llama.delay = 0.0
    response = await provider.generate(ProviderRequest(messages=CHAT))
    assert response.text == "Bonjour Alice !"
    assert time.monotonic() - started < 2.0
    await provider.aclose()


async def test_cancellation_stops_generation(gguf: Path) -> None:
    llama = FakeLlama(delay=5.0)
    provider, _ = make(gguf, llama)
    task = asyncio.create_task(provider.generate(ProviderRequest(messages=CHAT)))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = time.monotonic()
    llama.delay = 0.0
    await provider.generate(ProviderRequest(messages=CHAT))
    assert time.monotonic() - started < 1.0
    await provider.aclose()
