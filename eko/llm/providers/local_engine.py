"""The local model on its worker thread: loading it, building a prompt, one generation.

Everything here is synchronous and runs on LocalLlamaProvider's single worker thread (a
llama.cpp context is not re-entrant). The provider (eko.llm.providers.local) owns the async
side: the priority gate, the thread, deadlines, preemption and streaming.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import structlog

from eko.llm.chat_template import control_token_ids
from eko.llm.errors import InvalidOutput, PromptTooLong, ProviderError, ProviderUnavailable
from eko.llm.prompt_budget import InputCut
from eko.llm.providers import local_prompt
from eko.llm.providers.llama_backend import (
    CancelFlag,
    GrammarFactory,
    LlamaLike,
    LlamaLoader,
    TemplateFactory,
    ends_generation,
    install_prompt_cache,
    streamed_completion,
    to_response,
)
from eko.llm.providers.llama_prefill import prefill_in_chunks
from eko.llm.providers.local_prompt import LoadedModel, PromptShape, build_prompt
from eko.llm.sanitize import instruction_texts, sanitize_reply
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

log = structlog.get_logger("eko.llm")

PromptStyleSetting = Literal["auto", "template", "transcript"]

# Turn-start tokens get this logit bias: never sampled, so a reply can only end its own turn.
_BANNED = float("-inf")
# A person's prompt is read in chunks of llama.cpp's own batch (llama-cpp-python's default
# n_batch): the caller giving up (its deadline) frees the model within one chunk, and a prompt
# is read in the batches llama.cpp would use by itself, so greedy answers stay the same (other
# batch sizes change the floating-point sums, and a small model's answer with them).
_INTERACTIVE_CHUNK = 512


class LocalEngine:
    """One GGUF model, loaded on first use: its prompt, its grammar cache, its generations."""

    def __init__(
        self,
        *,
        name: str,
        model: str,
        model_path: Path | None,
        resolve_default: Callable[[], Path],
        n_ctx: int,
        n_threads: int,
        max_prompt_tokens: int | None,
        prompt_cache_bytes: int,
        prefill_chunk: int,
        user_label: str,
        prompt_style: PromptStyleSetting,
        loader: LlamaLoader,
        grammar_factory: GrammarFactory,
        template_factory: TemplateFactory,
    ) -> None:
        self.name = name
        self.model = model
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.max_prompt_tokens = max_prompt_tokens
        self.prompt_cache_bytes = prompt_cache_bytes
        self.prefill_chunk = prefill_chunk
        self.user_label = user_label
        self.prompt_style = prompt_style
        self._resolve_default = resolve_default
        self._loader = loader
        self._grammar_factory = grammar_factory
        self._template_factory = template_factory
        self.loaded: LoadedModel | None = None
        self._grammars: dict[str, Any] = {}

    @property
    def shape(self) -> PromptShape:
        return PromptShape(
            self.name, self.model, self.n_ctx, self.max_prompt_tokens, self.user_label
        )

    def ensure_loaded(self) -> LoadedModel:
        if self.loaded is not None:
            return self.loaded
        try:
            path = self.model_path or self._resolve_default()
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise ProviderUnavailable(self.name, f"no model file: {exc}") from exc
        if not path.is_file():
            raise ProviderUnavailable(self.name, f"model file not found: {path}")
        try:
            llama = self._loader(path, self.n_ctx, self.n_threads)
        except ImportError as exc:
            raise ProviderUnavailable(self.name, f"llama-cpp-python is not usable: {exc}") from exc
        except (OSError, ValueError, RuntimeError) as exc:
            raise ProviderUnavailable(self.name, f"cannot load {path.name}: {exc}") from exc
        template = None if self.prompt_style == "transcript" else self._template_factory(llama)
        if template is None and self.prompt_style == "template":
            log.warning("llm.local.no_chat_template", model=path.stem, fallback="transcript")
        banned = (
            control_token_ids(llama, template.stop, ends_generation=ends_generation(llama))
            if template is not None
            else frozenset()
        )
        if self.prompt_cache_bytes > 0:
            install_prompt_cache(llama, self.prompt_cache_bytes)
        self.model_path = path
        self.model = path.stem
        self.loaded = LoadedModel(llama=llama, template=template, banned_tokens=banned)
        return self.loaded

    def unload(self) -> None:
        loaded, self.loaded = self.loaded, None
        close = getattr(loaded.llama, "close", None) if loaded is not None else None
        if callable(close):
            close()

    def count(self, messages: Sequence[ChatMessage], max_tokens: int) -> int | None:
        """The prompt's length in this model's tokens; None until the model is loaded."""
        return local_prompt.count(self.loaded, messages, max_tokens, self.shape)

    def fit(self, request: ProviderRequest) -> tuple[local_prompt.Fitted, InputCut | None]:
        return local_prompt.fit(self.ensure_loaded(), request, self.shape)

    def generate(
        self,
        request: ProviderRequest,
        cancel: CancelFlag,
        *,
        chunked: bool = False,
        on_text: Callable[[str], None] | None = None,
    ) -> ProviderResponse:
        """One generation: the prompt fitted to the budget, read in chunks (`chunked`: fine
        ones, for a background call someone may be waiting behind), then generated — each
        piece of text also handed to `on_text` as it comes when given — and sanitized."""
        loaded = self.ensure_loaded()
        prompt, template_stop, cut = build_prompt(loaded, request, self.shape)
        # Fine chunks when someone may be waiting behind a background call; otherwise coarse
        # ones, so that a caller giving up (its deadline) still frees the model mid-prompt.
        chunk = self.prefill_chunk if chunked else max(_INTERACTIVE_CHUNK, self.prefill_chunk)
        if isinstance(prompt, list) and not prefill_in_chunks(
            loaded.llama, prompt, cancel.is_set, chunk=chunk
        ):
            # Someone is waiting, or the caller gave up: stopped between two chunks of the
            # prompt, nothing generated.
            cancel.stopped = True
            return ProviderResponse(text="", usage=Usage(), model=self.model, truncated=True)
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stopping_criteria": cancel,
        }
        if loaded.banned_tokens:
            options["logit_bias"] = dict.fromkeys(loaded.banned_tokens, _BANNED)
        if request.json_schema is not None:
            options["grammar"] = self._grammar(request.json_schema, loaded.llama)
            # The grammar ends the JSON itself; a turn marker inside a string must not cut it.
            template_stop = []
        options["stop"] = list(
            dict.fromkeys(marker for marker in (*template_stop, *request.stop) if marker)
        )
        try:
            result = (
                loaded.llama.create_completion(prompt, **options)
                if on_text is None
                # Streamed: the same generation, each piece of text also handed to `on_text`.
                else streamed_completion(loaded.llama, prompt, on_text, **options)
            )
        except ValueError as exc:
            if "exceed context window" in str(exc):
                raise PromptTooLong(self.name, str(exc)) from exc
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        except RuntimeError as exc:
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        response = replace(to_response(self.name, self.model, result), input_cut=cut)
        if request.json_schema is not None:
            return response
        return self._sanitized(response, request)

    def _grammar(self, schema: dict[str, Any], llama: LlamaLike) -> Any:
        # Property order is kept: the grammar generates fields in schema order, and a field
        # meant to be written first (reasoning before a verdict) must stay first.
        key = json.dumps(schema)
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = self._grammar_factory(key, llama)
            except Exception as exc:  # the converter asserts and raises as it likes
                raise InvalidOutput(
                    self.name, f"schema not supported by the grammar: {exc}"
                ) from exc
            self._grammars[key] = grammar
        return grammar

    def _sanitized(self, response: ProviderResponse, request: ProviderRequest) -> ProviderResponse:
        clean = sanitize_reply(
            response.text,
            assistant_name=request.assistant_name,
            speakers=speakers(request.messages, self.user_label),
            prompt_texts=instruction_texts(request.messages, request.quotable),
        )
        if clean == response.text:
            return response
        # Counts only: the text is user data.
        log.info(
            "llm.local.sanitized",
            provider=self.name,
            model=self.model,
            chars_before=len(response.text),
            chars_after=len(clean),
        )
        return replace(response, text=clean)


def speakers(messages: tuple[ChatMessage, ...], user_label: str) -> list[str]:
    """The names a reply must not open a turn for: the user's label and every named speaker."""
    return [user_label, *(m.name for m in messages if m.name)]
