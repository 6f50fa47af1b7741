"""The local model's prompt cache holds states without their logits (llama_state_cache.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from llama_cpp.llama import LlamaState

from eko.llm.providers import LocalLlamaProvider, resolve_default_model_path
from eko.llm.providers.llama_state_cache import lean_ram_cache
from eko.llm.types import ChatMessage, ProviderRequest
from tests.llama_threads import llama_threads

VOCAB = 1_000
MB = 1 << 20


def state(tokens: list[int], *, rows: int = 512, state_bytes: int = MB) -> LlamaState:
    return LlamaState(
        input_ids=np.array(tokens, dtype=np.intc),
        scores=np.ones((rows, VOCAB), dtype=np.single),
        n_tokens=len(tokens),
        llama_state=bytes(state_bytes),
        llama_state_size=state_bytes,
        seed=7,
    )


def test_a_state_is_kept_with_one_row_of_logits_and_found_by_prefix() -> None:
    cache = lean_ram_cache(10 * MB)
    cache[[1, 2, 3]] = state([1, 2, 3])
    found = cache[[1, 2, 3, 4, 5]]  # the longest shared prefix, as llama.cpp looks it up
    assert found.scores.shape == (1, VOCAB)
    assert (found.n_tokens, found.seed, found.llama_state_size) == (3, 7, MB)
    assert found.input_ids.tolist() == [1, 2, 3]


def test_the_capacity_still_evicts_the_least_recently_used() -> None:
    cache = lean_ram_cache(2 * MB)
    for first in (1, 2, 3):
        cache[[first, 9]] = state([first, 9])
    assert cache.cache_size <= 2 * MB
    with pytest.raises(KeyError):
        cache[[1, 9]]


@pytest.mark.slow
async def test_the_bundled_model_answers_the_same_from_its_lean_cache() -> None:
    provider = LocalLlamaProvider(
        resolve_default_model_path(),
        n_ctx=1024,
        n_threads=llama_threads(),
        prompt_cache_bytes=64 * MB,
    )
    question = ChatMessage("user", "What is the capital of Italy? One word.")
    request = ProviderRequest(
        messages=(ChatMessage("system", "You are a helpful assistant."), question),
        max_tokens=8,
        temperature=0.0,
    )
    try:
        first = await provider.generate(request)
        again = await provider.generate(request)  # its prompt read from the cache
        llama: Any = provider.engine.ensure_loaded().llama
        states = list(llama.cache.cache_state.values())
    finally:
        await provider.aclose()
    assert "Rome" in first.text and again.text == first.text
    assert states and all(s.scores.shape[0] == 1 for s in states)
