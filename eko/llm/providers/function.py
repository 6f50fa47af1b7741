"""FunctionModel: a provider whose answers come from a Python function — the test double.

Tests of logic above the LLM layer (orchestrator, summaries, reflection…) script the model
with it instead of running one:

    model = FunctionModel(lambda request: '{"confidence": 0.9, ...}')
    model = FunctionModel.scripted("first answer", ProviderTimeout("fn", "slow"), "third")

Every request is kept in `requests`, so a test can assert what the model was asked.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias

from eko.llm.errors import InvalidOutput, ProviderError
from eko.llm.types import ProviderRequest, ProviderResponse, Usage

FunctionResult: TypeAlias = str | ProviderResponse
ModelFunction: TypeAlias = Callable[[ProviderRequest], FunctionResult | Awaitable[FunctionResult]]
ScriptStep: TypeAlias = str | ProviderResponse | ProviderError


def estimate_tokens(text: str) -> int:
    """A rough token count (whitespace words) so usage accounting is exercised in tests."""
    return len(text.split())


class FunctionModel:
    """A Provider backed by a sync or async function of the request.

    The function returns the answer text (usage is estimated) or a full ProviderResponse, and
    may raise ProviderError subclasses to simulate failures. Any other exception propagates,
    as a bug in a test script should.
    """

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
        cls, text: str, *, name: str = "function", model: str = "function"
    ) -> FunctionModel:
        return cls(lambda _request: text, name=name, model=model)

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        self.requests.append(request)
        result = self._function(request)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ProviderResponse):
            return result
        prompt = " ".join(message.content for message in request.messages)
        return ProviderResponse(
            text=result,
            usage=Usage(
                input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(result)
            ),
            model=self.model,
        )

    async def aclose(self) -> None:
        self.closed = True
