"""One budget, in the reader's tokens, through a real server (real sockets).

A long conversation is imported; its answer lives in an old turn, far before the recent window,
and the recent turns are long. The model that reads the writer's prompt declares the bundled
model's prompt budget (1,280 tokens) and fits each prompt into it the way the local provider
does (eko/llm/prompt_budget.py: older turns dropped first, then the longest message's middle,
then the system message's end — where the memory section is), reporting what it cut. Asked
through the API, the evidence turn is in the prompt the model received, and nothing was cut:
memory had room (the compact instructions, the recent window held to its share) and selected
what fits. Before, the full instructions and the ten recent turns filled the budget, memory got
no room, and the provider dropped the oldest recent turns.

The slow variant counts the same prompts with the bundled model's own tokenizer and chat
template (the GGUF's vocabulary only) and fits them with the local provider's code.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from eko.config import Settings
from eko.llm.prompt_budget import InputCut, fit_messages
from eko.llm.providers import FunctionModel, local_prompt
from eko.llm.providers.factory import build_local_provider
from eko.llm.providers.llama_backend import load_llama_vocab
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

from .live_server import LiveEko, running_eko

BUDGET_TOKENS = 1_280  # EKO_LOCAL_MAX_PROMPT_TOKENS's default
SECRET = "flumbrewick"
TURNS = 120
EVIDENCE_AT = 20  # a hundred turns before the question
Fit = Callable[[Sequence[ChatMessage]], tuple[tuple[ChatMessage, ...], InputCut | None]]


def approx_tokens(messages: Sequence[ChatMessage]) -> int:
    """A remote reader's count: 3 characters a token, each message's template overhead."""
    return sum(math.ceil((len(m.content) + 24) / 3.0) for m in messages)


def is_writer(request: ProviderRequest) -> bool:
    return request.json_schema is None and "<luciform" in request.messages[0].content


class Reader:
    """A provider with a prompt budget that fits each prompt as the local provider does and
    keeps what the writer's call received, and what it cut (also in its response)."""

    def __init__(self, fit: Fit, count: Callable[[Sequence[ChatMessage]], int | None]) -> None:
        self.received: list[str] = []
        self.cuts: list[InputCut | None] = []
        self._fit = fit
        self.model = FunctionModel(self.answer)
        self.model.max_prompt_tokens = BUDGET_TOKENS  # type: ignore[attr-defined]
        self.model.count_prompt_tokens = (  # type: ignore[attr-defined]
            lambda messages, *, max_tokens: count(messages)
        )

    async def answer(self, request: ProviderRequest) -> str | ProviderResponse:
        if not is_writer(request):
            return "{}"  # the orchestrator's JSON is refused: the deterministic decision
        fitted, cut = self._fit(request.messages)
        self.received.append("\n".join(m.content for m in fitted))
        self.cuts.append(cut)
        return ProviderResponse("Noté.", Usage(1, 1), "reader", input_cut=cut)


def history() -> list[dict[str, Any]]:
    start = datetime(2024, 3, 1, tzinfo=UTC)
    turns = []
    for i in range(TURNS):
        content = (
            f"My neighbour's dog is called {SECRET}, a grey whippet who sleeps all day."
            if i == EVIDENCE_AT
            else f"Turn {i}: we talked about the weekend again, the long walk along the river, "
            "the bakery that opens early, the train timetable and what to cook for dinner, "
            "and then about the weather for the next few days and the garden's tomatoes."
        )
        turns.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": content,
                "created_at": (start + timedelta(hours=i)).isoformat(),
            }
        )
    return turns


def ask_in_a_long_conversation(eko: LiveEko) -> dict[str, Any]:
    with httpx.Client(base_url=eko.url, headers=eko.headers, timeout=60) as client:
        room = client.post("/v1/rooms", json={"kind": "direct"})
        assert room.status_code == 201, room.text
        room_id = room.json()["id"]
        imported = client.post(f"/v1/rooms/{room_id}/messages:import", json={"messages": history()})
        assert imported.status_code == 201, imported.text
        asked = client.post(
            f"/v1/rooms/{room_id}/messages",
            json={"content": "What is my neighbour's dog called?"},
        )
        assert asked.status_code == 201, asked.text
        reply: dict[str, Any] = asked.json()["assistant_message"]
        return reply


def check(reader: Reader, reply: dict[str, Any]) -> None:
    assert len(reader.received) == 1
    assert f"dog is called {SECRET}" in reader.received[0]  # the evidence reached the model
    assert reader.cuts == [None]  # nothing memory selected was cut afterwards
    meta = reply["metadata"]
    assert "input_cut" not in meta
    memory = meta["nodes"]["M"]["data"]
    # The reader's room was shared: the recent window held to its part, memory the rest.
    assert memory["budget_chars"] > 0 and memory["recent_turns_to_memory"] > 0


def approx_fit(messages: Sequence[ChatMessage]) -> tuple[tuple[ChatMessage, ...], InputCut | None]:
    return fit_messages(messages, count_tokens=approx_tokens, budget_tokens=BUDGET_TOKENS)


def test_the_evidence_memory_selects_reaches_a_small_budget_reader(database_url: str) -> None:
    reader = Reader(approx_fit, lambda _messages: None)  # counted as the product estimates
    with running_eko(database_url, [reader.model]) as eko:
        reply = ask_in_a_long_conversation(eko)
    check(reader, reply)


@pytest.mark.slow
def test_with_the_bundled_models_tokenizer(database_url: str) -> None:
    settings = Settings(_env_file=None, local_max_prompt_tokens=BUDGET_TOKENS)
    local = build_local_provider(settings, loader=load_llama_vocab)
    # The vocabulary only (no weights): the same template and tokenizer as a generation.
    loaded = local.engine.ensure_loaded()
    shape = local.engine.shape
    answer = settings.llm_max_tokens

    def fit(messages: Sequence[ChatMessage]) -> tuple[tuple[ChatMessage, ...], InputCut | None]:
        request = ProviderRequest(messages=tuple(messages), max_tokens=answer)
        return local_prompt.fit(loaded, request, shape)

    reader = Reader(fit, lambda messages: local_prompt.count(loaded, messages, answer, shape))
    with running_eko(database_url, [reader.model]) as eko:
        reply = ask_in_a_long_conversation(eko)
    check(reader, reply)
    asyncio.run(local.aclose())
