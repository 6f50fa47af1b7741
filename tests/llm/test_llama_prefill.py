"""A background prompt is read in chunks: a person waits one chunk, and the reading resumes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np

from eko.llm.providers.llama_prefill import common_prefix, prefill_in_chunks
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, Priority, ProviderRequest
from tests.llm.fake_llama import CHATML, FakeLlama, Loader


class State:
    def __init__(self, ids: list[int]) -> None:
        self.input_ids = np.array(ids, dtype=np.intc)


class DictCache:
    """llama_cpp's RAM cache semantics: the entry sharing the longest prefix with a key."""

    def __init__(self) -> None:
        self.states: dict[tuple[int, ...], State] = {}

    def __getitem__(self, key: list[int]) -> State:
        best = max(self.states, key=lambda k: common_prefix(k, key), default=None)
        if best is None or common_prefix(best, key) == 0:
            raise KeyError("Key not found")
        return self.states[best]

    def __setitem__(self, key: list[int], state: State) -> None:
        self.states[tuple(key)] = state


class EvalLlama(FakeLlama):
    """A fake that reads prompts like llama_cpp.Llama: eval() appends to its context."""

    def __init__(self, *, seconds_per_token: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.input_ids = np.zeros(4096, dtype=np.intc)
        self.n_tokens = 0
        self.cache: DictCache | None = DictCache()
        self.seconds_per_token = seconds_per_token
        self.evals: list[tuple[int, int]] = []  # (first position, tokens read)
        self.events: list[str] = []  # "eval" per chunk read, "generate" per completion
        self.loads = 0

    def eval(self, tokens: list[int]) -> None:
        time.sleep(self.seconds_per_token * len(tokens))
        self.evals.append((self.n_tokens, len(tokens)))
        self.events.append("eval")
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)

    def save_state(self) -> State:
        return State(self.input_ids[: self.n_tokens].tolist())

    def load_state(self, state: State) -> None:
        self.loads += 1
        self.n_tokens = len(state.input_ids)
        self.input_ids[: self.n_tokens] = state.input_ids

    def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
        if isinstance(prompt, list):  # like llama.cpp: reuse the shared prefix, read the rest
            shared = min(common_prefix(self.input_ids[: self.n_tokens].tolist(), prompt), 10**9)
            self.n_tokens = shared
            self.eval(prompt[shared:])
        self.events.append("generate")
        return super().create_completion(prompt, **kwargs)


def test_reads_all_but_the_last_token_in_chunks_after_the_shared_prefix() -> None:
    llama = EvalLlama()
    llama.eval([7, 8, 9, 1])  # an earlier prompt shares 3 tokens
    tokens = [7, 8, 9, *range(100, 150)]
    assert prefill_in_chunks(llama, tokens, lambda: False, chunk=16)
    assert llama.evals[1:] == [(3, 16), (19, 16), (35, 16), (51, 1)]
    assert llama.input_ids[: llama.n_tokens].tolist() == tokens[:-1]


def test_a_waiting_person_stops_it_between_chunks_and_it_resumes_from_the_cache() -> None:
    llama = EvalLlama()
    tokens = list(range(100, 200))
    chunks_before_stop = iter([False, False, True])
    assert not prefill_in_chunks(llama, tokens, lambda: next(chunks_before_stop), chunk=20)
    assert llama.evals == [(0, 20), (20, 20)]
    assert llama.cache is not None and tuple(tokens[:40]) in llama.cache.states
    llama.eval([1, 2, 3])  # the person's own call replaced the context meanwhile
    llama.n_tokens = 3
    assert prefill_in_chunks(llama, tokens, lambda: False, chunk=20)
    assert llama.loads == 1  # the part already read came back from the cache
    assert llama.evals[-3:] == [(40, 20), (60, 20), (80, 19)]


def test_a_short_rest_or_a_llama_without_eval_is_left_to_the_generation() -> None:
    llama = EvalLlama()
    assert prefill_in_chunks(llama, list(range(10)), lambda: True, chunk=16)
    assert llama.evals == []
    assert prefill_in_chunks(FakeLlama(), list(range(100)), lambda: True, chunk=16)


def request(text: str, priority: Priority) -> ProviderRequest:
    return ProviderRequest(messages=(ChatMessage("user", text),), priority=priority)


async def test_a_person_waits_one_chunk_of_a_long_background_prompt(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    # 1 ms per token: the background prompt (~1,000 tokens) takes ~1 s to read at once.
    llama = EvalLlama(seconds_per_token=0.001, chat_template=CHATML)
    provider = LocalLlamaProvider(
        gguf, loader=Loader(llama), prefill_chunk=50, prompt_style="template"
    )
    await provider.load()
    summary = asyncio.create_task(provider.generate(request("x" * 1000, "background")))
    await asyncio.sleep(0.2)  # the summary's prompt is being read
    assert llama.calls == [] and llama.events
    await provider.generate(request("hello", "interactive"))
    await summary
    texts = [llama.text_of(prompt) for prompt, _ in llama.calls]
    # The person went before the summary's generation started; the summary then resumed.
    assert "hello" in texts[0] and "x" * 1000 in texts[1] and len(texts) == 2
    # The person's call came between two chunks of the summary's prompt, not after all of it:
    # summary chunks, the person's generation, the rest of the summary's chunks, its generation.
    person = llama.events.index("generate")
    before, after = llama.events[:person], llama.events[person + 1 :]
    assert 1 <= before.count("eval") < 1000 // 50
    assert after.count("eval") >= 2 and after[-1] == "generate"
    # Its reading resumed from the cache where it stopped, not from the start.
    assert llama.loads == 1
    starts = [start for start, _ in llama.evals]
    assert starts[-2] > 50 * before.count("eval") - 50
    await provider.aclose()
