"""build_providers and LLMRuntime.from_settings: settings become an ordered provider chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from eko.config import ProviderConfig, Settings
from eko.llm.providers import LocalLlamaProvider, OpenAICompatProvider, build_providers
from eko.llm.recording import MemoryRecorder
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage


def settings(**overrides: Any) -> Settings:
    return Settings(_env_file=None, **overrides)


async def test_default_is_the_bundled_local_model() -> None:
    [provider] = build_providers(settings())
    assert isinstance(provider, LocalLlamaProvider)
    assert provider.name == "local"
    assert provider.timeout_s is None  # the HTTP default does not apply to a local model
    assert provider.model_path is None  # resolved to the bundled GGUF on first use
    assert provider.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert provider.prompt_style == "template"  # an instruction model, its own chat template
    assert not provider.loaded
    await provider.aclose()


async def test_the_bundled_model_is_chosen_by_name() -> None:
    [provider] = build_providers(settings(local_model="gemma-3-270m-q4_k_m"))
    assert isinstance(provider, LocalLlamaProvider)
    assert provider.model == "gemma-3-270m-q4_k_m"
    assert provider.prompt_style == "transcript"  # a base model
    await provider.aclose()


def test_an_unknown_bundled_model_is_a_settings_error() -> None:
    with pytest.raises(ValidationError, match="unknown bundled model 'tiny'"):
        settings(local_model="tiny")


async def test_order_kinds_and_options(tmp_path: Path) -> None:
    config = settings(
        llm_providers=[
            ProviderConfig(
                kind="openai",
                name="deepseek",
                base_url="https://api.deepseek.test/v1",
                model="deepseek-chat",
                api_key="sk-1",
                timeout_s=12,
                headers={"X-A": "b"},
                structured_output="json_object",
            ),
            ProviderConfig(
                kind="openai", base_url="https://api.openai.test/v1", model="gpt-4o-mini"
            ),
            ProviderConfig(kind="openai", base_url="http://localhost:8080/v1", model="local-vllm"),
            ProviderConfig(kind="local", timeout_s=30),
        ],
        local_model_path=tmp_path / "m.gguf",
        local_n_ctx=1024,
        local_threads=3,
    )
    providers = build_providers(config)

    assert [p.name for p in providers] == ["deepseek", "openai", "openai#2", "local"]
    deepseek, openai, _, local = providers
    assert isinstance(deepseek, OpenAICompatProvider) and isinstance(openai, OpenAICompatProvider)
    assert deepseek.model == "deepseek-chat"
    assert deepseek.structured_output == "json_object"
    assert openai.structured_output == "json_schema"
    assert isinstance(local, LocalLlamaProvider)
    assert (local.model_path, local.n_ctx, local.n_threads) == (tmp_path / "m.gguf", 1024, 3)
    assert local.model == "m"
    assert local.timeout_s == 30
    for provider in providers:
        await provider.aclose()


async def test_transport_is_injected_and_secrets_are_sent() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}
        return httpx.Response(200, json=body)

    config = settings(
        llm_providers=[
            ProviderConfig(
                kind="openai",
                base_url="https://api.test/v1",
                model="m",
                api_key="sk-xyz",
                headers={"X-Tenant": "eko"},
            )
        ],
        assistant_name="Lisa",
        llm_max_tokens=33,
        debug_dump_prompts=True,
    )
    recorder = MemoryRecorder()
    runtime = LLMRuntime.from_settings(config, recorder, transport=httpx.MockTransport(handler))

    completion = await runtime.complete([ChatMessage("user", "yo")], purpose="writer")

    assert completion.text == "hi"
    assert seen[0].headers["authorization"] == "Bearer sk-xyz"
    assert seen[0].headers["x-tenant"] == "eko"
    assert b'"max_tokens":33' in seen[0].content.replace(b" ", b"")
    assert recorder.records[0].prompt is not None  # debug_dump_prompts came from settings
    await runtime.aclose()
