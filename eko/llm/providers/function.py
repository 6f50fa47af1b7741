"""FunctionModel: a provider whose answers come from a Python function — the test double.

Tests of logic above the LLM layer (orchestrator, summaries, reflection…) script the model
with it instead of running one:

    model = FunctionModel(lambda request: '{"confidence": 0.9, ...}')
    model = FunctionModel.scripted("first answer", ProviderTimeout("fn", "slow"), "third")

Every request is kept in `requests`, so a test can assert what the model was asked.

Streaming: a plain answer streams word by word; a `Deltas` answer streams exactly its parts,
with an optional pause between them and an optional failure after some of them:

    model = FunctionModel.constant(Deltas(("Bon", "jour"), delay_s=0.05))
    model = FunctionModel.constant(Deltas(("Bon", "jour"), fail_after=1))  # breaks mid-stream
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeAlias

from eko.llm.errors import InvalidOutput, ProviderError
from eko.llm.types import ProviderRequest, ProviderResponse, StreamItem, Usage


@dataclass(frozen=True, slots=True)
class Deltas:
    """A scripted streamed answer: its parts in order, a pause before each, maybe a failure."""

    parts: tuple[str, ...]
    delay_s: float = 0.0
    # Raise `error` after this many parts were streamed (None: never fail).
    fail_after: int | None = None
    error: ProviderError | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def failure(self, name: str) -> ProviderError:
        return self.error or ProviderError(name, "stream broken (scripted)")


FunctionResult: TypeAlias = str | ProviderResponse | Deltas
ModelFunction: TypeAlias = Callable[[ProviderRequest], FunctionResult | Awaitable[FunctionResult]]
ScriptStep: TypeAlias = str | ProviderResponse | ProviderError | Deltas
_WORDS = re.compile(r"\s*\S+|\s+")


def estimate_tokens(text: str) -> int:
    """A rough token count (whitespace words) so usage accounting is exercised in tests."""
    return len(text.split())


class FunctionModel:
    """A Provider backed by a sync or async function of the request.

    The function returns the answer text (usage is estimated) or a full ProviderResponse, and
    may raise ProviderError subclasses to simulate failures. Any other exception propagates,
    as a bug in a test script should.
    """

    # Set True on an instance to stand in for a small local model (compact output contracts).
    prefers_compact_output = False

    def __init__(
        self,
        function: ModelFunction,
        *,
        name: str = "function",
        model: str = "function",
    ) -> None:
        self.name = name
        self.model = model
        self._function = function
        self.requests: list[ProviderRequest] = []
        self.closed = False

    @classmethod
    def scripted(
        cls, *steps: ScriptStep, name: str = "function", model: str = "function"
    ) -> FunctionModel:
        """Answers (or raises) the given steps in order; one call too many raises InvalidOutput."""
        queue = list(steps)

        def next_step(request: ProviderRequest) -> FunctionResult:
            if not queue:
                raise InvalidOutput(name, "script exhausted: no answer left")
            step = queue.pop(0)
            if isinstance(step, ProviderError):
                raise step
            return step

        return cls(next_step, name=name, model=model)

    @classmethod
    def constant(
        cls, text: FunctionResult, *, name: str = "function", model: str = "function"
    ) -> FunctionModel:
        return cls(lambda _request: text, name=name, model=model)

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        result = await self._result(request)
        if isinstance(result, Deltas):
            if result.fail_after is not None:
                raise result.failure(self.name)
            return self._response(request, result.text)
        if isinstance(result, ProviderResponse):
            return result
        return self._response(request, result)

    async def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]:
        """The answer in deltas, then the whole response (see `Deltas`)."""
        result = await self._result(request)
        if isinstance(result, Deltas):
            script = result
        else:
            text = result.text if isinstance(result, ProviderResponse) else result
            script = Deltas(tuple(_WORDS.findall(text)))
        for index, part in enumerate(script.parts):
            if script.fail_after is not None and index >= script.fail_after:
                raise script.failure(self.name)
            if script.delay_s:
                await asyncio.sleep(script.delay_s)
            yield part
        if script.fail_after is not None:
            raise script.failure(self.name)
        yield (
            result if isinstance(result, ProviderResponse) else self._response(request, script.text)
        )

    async def _result(self, request: ProviderRequest) -> FunctionResult:
        self.requests.append(request)
        result = self._function(request)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _response(self, request: ProviderRequest, text: str) -> ProviderResponse:
        prompt = " ".join(message.content for message in request.messages)
        return ProviderResponse(
            text=text,
            usage=Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text)),
            model=self.model,
        )

    async def aclose(self) -> None:
        self.closed = True
