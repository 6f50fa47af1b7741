"""FunctionModel, the scripted test double other features' tests rely on."""

from __future__ import annotations

import pytest

from eko.llm.errors import InvalidOutput, ProviderTimeout
from eko.llm.providers.function import FunctionModel
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

REQUEST = ProviderRequest(messages=(ChatMessage("user", "two words"),))


async def test_sync_function_and_estimated_usage() -> None:
    model = FunctionModel(lambda request: f"echo {request.messages[-1].content}", name="fn")
    response = await model.generate(REQUEST)
    assert response.text == "echo two words"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (2, 3)
    assert response.model == "function"
    assert model.requests == [REQUEST]


async def test_async_function_returning_a_full_response() -> None:
    full = ProviderResponse(text="x", usage=Usage(9, 1), model="scripted", truncated=True)

    async def answer(request: ProviderRequest) -> ProviderResponse:
        return full

    assert await FunctionModel(answer).generate(REQUEST) is full


async def test_scripted_steps_in_order_then_exhausted() -> None:
    model = FunctionModel.scripted("one", ProviderTimeout("fn", "slow"), "three", name="fn")
    assert (await model.generate(REQUEST)).text == "one"
    with pytest.raises(ProviderTimeout):
        await model.generate(REQUEST)
    assert (await model.generate(REQUEST)).text == "three"
    with pytest.raises(InvalidOutput, match="script exhausted"):
        await model.generate(REQUEST)
    assert len(model.requests) == 4


async def test_other_exceptions_propagate() -> None:
    def bug(request: ProviderRequest) -> str:
        raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        await FunctionModel(bug).generate(REQUEST)
