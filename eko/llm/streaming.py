"""Asking one provider delta by delta: `LLMRuntime.stream`'s way through the one provider walk.

A provider that fails before its first delta is skipped silently, as `complete` does (the next
one streams instead). Once a delta was handed out the answer has begun: a failure then ends the
call with `StreamInterrupted`, carrying the text shown so far. Stopping (cancelling the caller)
closes the provider's stream, which stops the generation. A provider without `stream` answers
whole, as a single delta. Everything else (breakers, deadlines, call log, the Completion) is the
walk's (eko/llm/provider_walk.py), the same as `complete`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import aclosing

from eko.llm.errors import InvalidOutput, LLMError
from eko.llm.types import Attempt, Provider, ProviderRequest, ProviderResponse, StreamingProvider

DeltaSink = Callable[[str], None]
# Told (provider name, model) when a provider's answer begins, before its first delta.
BeginSink = Callable[[str, str], None]


class StreamInterrupted(LLMError):
    """The answer broke after it began: `partial` is the text handed out before the failure."""

    def __init__(self, partial: str, attempts: tuple[Attempt, ...], error: str) -> None:
        super().__init__(f"the answer stream broke after {len(partial)} characters: {error}")
        self.partial = partial
        self.attempts = attempts
        self.error = error


class StreamedAnswer:
    """A ProviderAsk that hands each piece of the answer to `on_delta` as soon as it is known."""

    def __init__(self, on_delta: DeltaSink, on_begin: BeginSink | None = None) -> None:
        self._on_delta = on_delta
        self._on_begin = on_begin
        self._shown: list[str] = []  # the current provider's deltas handed out

    async def answer(self, provider: Provider, request: ProviderRequest) -> ProviderResponse:
        self._shown = []
        if not isinstance(provider, StreamingProvider):
            response = await provider.generate(request)
            if response.text.strip():
                self._hand_out(provider, response.text.strip())
            return response
        async with aclosing(provider.stream(request)) as items:
            async for item in items:
                if isinstance(item, ProviderResponse):
                    return item
                if item:
                    self._hand_out(provider, item)
        raise InvalidOutput(provider.name, "the stream ended without a response")

    def failed(self, error: str, attempts: Sequence[Attempt]) -> None:
        if self._shown:
            raise StreamInterrupted("".join(self._shown), tuple(attempts), error)

    def progress(self) -> str:
        return f" after {len(self._shown)} deltas"

    def _hand_out(self, provider: Provider, delta: str) -> None:
        if not self._shown and self._on_begin is not None:
            self._on_begin(provider.name, provider.model)
        self._shown.append(delta)
        self._on_delta(delta)
