"""Streaming for the local provider: the same generation, handed out as it is produced.

A mixin of LocalLlamaProvider (eko.llm.providers.local), which provides the gate, the
worker thread and the generate path this reuses.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

from eko.llm.errors import ProviderTimeout
from eko.llm.priority import Lease, PriorityGate
from eko.llm.providers.llama_backend import CancelFlag, StreamingLlama, consume_outcome
from eko.llm.sanitize import instruction_texts, sanitize_reply
from eko.llm.stream_text import StablePrefix, sanitizer_tail
from eko.llm.types import ChatMessage, Priority, ProviderRequest, ProviderResponse, StreamItem

if TYPE_CHECKING:
    from eko.llm.providers.local_prompt import LoadedModel


class LocalStreaming:
    """What LocalLlamaProvider brings (declared here for the type checker)."""

    name: str
    timeout_s: float | None
    _gate: PriorityGate
    _user_label: str
    _loaded: LoadedModel | None

    if TYPE_CHECKING:  # defined by LocalLlamaProvider

        def _worker(self) -> ThreadPoolExecutor: ...

        def _turn(self, priority: Priority) -> AbstractAsyncContextManager[Lease]: ...

        def _ensure_loaded(self) -> LoadedModel: ...

        def _generate_sync(
            self, request: ProviderRequest, cancel: CancelFlag
        ) -> ProviderResponse: ...

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
                self._worker(), self._stream_sync, request, cancel, on_text
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
        names = speakers(request.messages, self._user_label)
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

    def _stream_sync(
        self, request: ProviderRequest, cancel: CancelFlag, on_text: Callable[[str], None]
    ) -> ProviderResponse:
        """The generate path itself (prompt, stops, budget, sanitizer), with a llama that
        streams: its text goes to `on_text` as it comes. Runs on the worker thread only."""
        loaded = self._ensure_loaded()
        streaming = dataclasses.replace(loaded, llama=StreamingLlama(loaded.llama, on_text))
        self._loaded = streaming
        try:
            return self._generate_sync(request, cancel)
        finally:
            if self._loaded is streaming:
                self._loaded = loaded


def speakers(messages: tuple[ChatMessage, ...], user_label: str) -> list[str]:
    return [user_label, *(m.name for m in messages if m.name)]
