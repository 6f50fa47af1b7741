"""One budget: memory is sized by the prompt budget of the model that reads it.

Through the API with a scripted model that declares a small prompt budget (as the bundled
model's EKO_LOCAL_MAX_PROMPT_TOKENS) and fits each prompt into it the way the local provider
does (eko/llm/prompt_budget.py: older turns dropped, then the longest message's middle, then
the system message's end — where the memory section is), keeping what it received: the turn
memory recalled for the question is in what the model read, and nothing was cut. Before,
memory filled its own 8,000 characters and the provider cut the end of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from eko.llm.prompt_budget import fit_messages
from eko.llm.providers import FunctionModel
from eko.llm.types import ChatMessage, ProviderRequest
from tests.api.conftest import HarnessFactory

from .test_recent_window_api import is_writer, pro_user

BUDGET_TOKENS = 3_000
# Characters per token of this reader: what eko/llm/prompt_budget.py assumes (CHARS_PER_TOKEN).
CHARS_PER_TOKEN = 3.0
SECRET = "flumbrewick"
TURNS = 300
EVIDENCE_AT = 270  # the newest recalled turn: last in the memory section


def tokens(messages: Sequence[ChatMessage]) -> int:
    """What the reader counts: the rendered prompt at CHARS_PER_TOKEN, with each message's
    template overhead."""
    return sum(math.ceil((len(m.content) + 24) / CHARS_PER_TOKEN) for m in messages)


class BudgetedReader:
    """A provider with a prompt budget, fitting each prompt as the local provider does."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.cuts: list[Any] = []
        self.model = FunctionModel(self.answer)
        self.model.max_prompt_tokens = BUDGET_TOKENS  # type: ignore[attr-defined]

    def answer(self, request: ProviderRequest) -> str:
        kept, cut = fit_messages(request.messages, count_tokens=tokens, budget_tokens=6_000)
        if is_writer(request):
            fitted, cut = fit_messages(
                request.messages, count_tokens=tokens, budget_tokens=BUDGET_TOKENS
            )
            self.read.append("\n".join(m.content for m in fitted))
            self.cuts.append(cut)
        del kept
        return "Noté."


def history() -> list[dict[str, Any]]:
    start = datetime(2023, 3, 1, tzinfo=UTC)
    turns = []
    for i in range(TURNS):
        content = (
            f"In the garden the {SECRET} is the blue watering can my uncle left me."
            if i == EVIDENCE_AT
            else f"Turn {i}: the garden needed water again, the tomatoes and beans grew, "
            f"and the neighbours came over to talk about the garden for a while."
        )
        turns.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": content,
                "created_at": (start + timedelta(hours=i)).isoformat(),
            }
        )
    return turns


async def test_what_memory_selects_reaches_a_model_with_a_small_prompt_budget(
    make_harness: HarnessFactory,
) -> None:
    reader = BudgetedReader()
    # A short recent window: what does not fit is the memory section itself.
    async with make_harness(providers=[reader.model], recent_turns=2) as h:
        _, headers = await pro_user(h, "nina")
        room = await h.direct_room(headers)
        imported = await h.client.post(
            f"/v1/rooms/{room}/messages:import", headers=headers, json={"messages": history()}
        )
        assert imported.status_code == 201, imported.text
        asked = await h.client.post(
            f"/v1/rooms/{room}/messages",
            headers=headers,
            json={"content": f"In the garden, what is the {SECRET}?"},
        )
        assert asked.status_code == 201, asked.text

    assert len(reader.read) == 1
    prompt = reader.read[0]
    assert "Earlier in This Conversation" in prompt
    assert f"the {SECRET} is the blue watering can" in prompt
    assert reader.cuts == [None]  # nothing memory selected was cut afterwards
