"""Who reads the prompt in `eko bench context --provider-budget`: a budget and a token count.

- `local`: the bundled model as the settings describe it (EKO_LOCAL_MAX_PROMPT_TOKENS within
  its context window less the answer), its tokens counted by its own tokenizer and chat
  template (the GGUF's vocabulary only, loaded in a second or two) and the prompt fitted by the
  provider's own code (LocalLlamaProvider.fit_prompt); when the model file cannot be opened,
  the same budget counted as the product sizes text without a tokenizer (approx_prompt_tokens).
- `N`: a remote provider declaring a prompt budget of N tokens, counted the same approximate
  way and fitted by the same rule (eko/llm/prompt_budget.py). A remote provider does not cut
  prompts itself: what the rule would cut is what would not fit its budget.

Either one declares its budget the way providers do (`max_prompt_tokens`), so the writer sizes
the memory section from it (ResponseWriter.reader_room), as on the server. No model is called.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from eko.config import Settings
from eko.llm.errors import LLMError
from eko.llm.prompt_budget import (
    InputCut,
    PromptDoesNotFit,
    approx_prompt_tokens,
    fit_messages,
    prompt_budget_tokens,
)
from eko.llm.providers import FunctionModel
from eko.llm.providers.factory import build_local_provider
from eko.llm.providers.llama_backend import load_llama_vocab
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, ProviderRequest
from eko.llm.types import Provider as ProviderType

Fitted = tuple[ChatMessage, ...]
# (what the model reads — None when even the instructions do not fit —, what was cut)
Fit = Callable[[Sequence[ChatMessage]], Awaitable[tuple[Fitted | None, InputCut | None]]]


class ReaderSpecError(ValueError):
    """A --provider-budget value that is neither `local` nor a positive number of tokens."""


def parse_reader(spec: str) -> str | int:
    """`local`, or a token budget (at least 256)."""
    if spec == "local":
        return spec
    try:
        tokens = int(spec.replace("_", "").replace(",", ""))
    except ValueError:
        raise ReaderSpecError(f"{spec!r} is neither 'local' nor a number of tokens") from None
    if tokens < 256:
        raise ReaderSpecError(f"{tokens} tokens is too small for a prompt (at least 256)")
    return tokens


@dataclass(frozen=True, slots=True)
class Reader:
    label: str  # the table's row suffix
    how: str  # how its tokens are counted
    budget_tokens: int
    # The writer's runtime: its first provider declares the budget.
    runtime: LLMRuntime
    fit: Fit
    provider: ProviderType


class DeclaredBudget(FunctionModel):
    """A provider that only declares a prompt budget; asking it anything is a bench bug."""

    def __init__(self, name: str, max_prompt_tokens: int, n_ctx: int | None = None) -> None:
        super().__init__(_never, name=name, model=name)
        self.max_prompt_tokens = max_prompt_tokens
        self.n_ctx = n_ctx


def _never(request: ProviderRequest) -> str:
    raise AssertionError("the context bench never asks the reader for an answer")


def _approx_fit(budget: int) -> Fit:
    async def fit(messages: Sequence[ChatMessage]) -> tuple[Fitted | None, InputCut | None]:
        try:
            return fit_messages(messages, count_tokens=approx_prompt_tokens, budget_tokens=budget)
        except PromptDoesNotFit:
            return None, None

    return fit


async def build_reader(settings: Settings, spec: str | int) -> Reader:
    answer = settings.llm_max_tokens
    if spec != "local":
        tokens = int(spec)
        declared = DeclaredBudget("remote", tokens)
        return Reader(
            f"remote {tokens:,} tokens",
            f"{tokens:,} tokens at {approx_label()}",
            tokens,
            LLMRuntime.from_settings(settings, providers=[declared]),
            _approx_fit(tokens),
            declared,
        )
    local = build_local_provider(settings, loader=load_llama_vocab)
    budget = prompt_budget_tokens(local, max_tokens=answer)
    assert budget is not None  # a local provider always declares one
    try:
        await local.fit_prompt([ChatMessage("user", "warm-up")], max_tokens=answer)
    except LLMError as exc:
        await local.aclose()
        declared = DeclaredBudget("local", settings.local_max_prompt_tokens, settings.local_n_ctx)
        return Reader(
            f"local {budget:,} tokens",
            f"{budget:,} tokens at {approx_label()} (model not opened: {str(exc)[:80]})",
            budget,
            LLMRuntime.from_settings(settings, providers=[declared]),
            _approx_fit(budget),
            declared,
        )

    async def fit(messages: Sequence[ChatMessage]) -> tuple[Fitted | None, InputCut | None]:
        try:
            return await local.fit_prompt(messages, max_tokens=answer)
        except LLMError:  # PromptTooLong: the instructions alone overflow
            return None, None

    return Reader(
        f"local {budget:,} tokens",
        f"{budget:,} tokens of {local.model}, counted by its tokenizer and chat template",
        budget,
        LLMRuntime.from_settings(settings, providers=[local]),
        fit,
        local,
    )


def approx_label() -> str:
    return "(chars + 24 per message) / 3 per token, as the product sizes text"
