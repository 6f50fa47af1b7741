"""llama.cpp's prompt cache, holding what a restored prompt needs and nothing more.

llama-cpp-python's LlamaRAMCache keeps each saved LlamaState whole: the model's state (what
its capacity counts) and a copy of the logits of every token read in the last batch, up to
n_batch × n_vocab floats (512 × 151,936 × 4 bytes = 311 MB for the bundled Qwen model) that it
does not count. With a 512 MB capacity and ~20 MB states, it kept ~25 of them: `eko bench
reply` grew to 14 GB of memory (measured 2026-11-27). A restored state is always read on
from before its last token (Llama.generate replays one token after `load_state`, and
prefill_in_chunks reads on), so its logits are never sampled from: only the last row is
kept, which `load_state` spreads over its rows as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def lean_ram_cache(capacity_bytes: int) -> Any:
    """A LlamaRAMCache of `capacity_bytes` whose states keep one row of logits."""
    from llama_cpp import LlamaRAMCache
    from llama_cpp.llama import LlamaState

    class LeanRAMCache(LlamaRAMCache):
        def __setitem__(self, key: Sequence[int], value: LlamaState) -> None:
            super().__setitem__(key, lean_state(value, LlamaState))

    return LeanRAMCache(capacity_bytes=capacity_bytes)


def lean_state(state: Any, state_type: Any) -> Any:
    """`state` with only its last row of logits (the rows past it are never read)."""
    return state_type(
        input_ids=state.input_ids,
        scores=state.scores[-1:].copy(),
        n_tokens=state.n_tokens,
        llama_state=state.llama_state,
        llama_state_size=state.llama_state_size,
        seed=state.seed,
    )
