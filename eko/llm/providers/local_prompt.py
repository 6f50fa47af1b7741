"""How a request becomes the local model's prompt: rendered with the model's chat template (or
as a completion transcript for a base model), fitted to the prompt budget, with its stops.

Kept apart from LocalLlamaProvider (eko.llm.providers.local), which schedules generations and
cleans answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from eko.llm.chat_template import ChatTemplate, TemplateError
from eko.llm.errors import PromptTooLong, ProviderError
from eko.llm.prompt_budget import InputCut, PromptDoesNotFit, fit_messages
from eko.llm.providers.llama_backend import LlamaLike
from eko.llm.transcript import render_transcript
from eko.llm.types import ChatMessage, ProviderRequest

log = structlog.get_logger("eko.llm")

Prompt = str | list[int]  # a transcript's text, or a chat template's tokens
Fitted = tuple[ChatMessage, ...]  # the messages a generation reads, fitted to the budget


@dataclass(frozen=True, slots=True)
class LoadedModel:
    llama: LlamaLike
    template: ChatTemplate | None  # None: prompted as a transcript
    banned_tokens: frozenset[int]


@dataclass(frozen=True, slots=True)
class PromptShape:
    """What the prompt depends on besides the request: who asks, and the budgets."""

    provider: str
    model: str
    n_ctx: int
    max_prompt_tokens: int | None
    user_label: str

    def budget(self, request: ProviderRequest) -> int:
        # The answer's tokens share the context window with the prompt's.
        room = max(self.n_ctx - request.max_tokens, 1)
        return min(self.max_prompt_tokens, room) if self.max_prompt_tokens else room


def build_prompt(
    loaded: LoadedModel, request: ProviderRequest, shape: PromptShape
) -> tuple[Prompt, list[str], InputCut | None]:
    """The prompt (text, or tokens for a chat template), its stop sequences, and what was cut
    from the messages to fit the prompt budget."""
    messages, cut = fit(loaded, request, shape)
    prompt, _, stop = render(loaded, messages, request, shape)
    if cut is not None:
        log.info("llm.local.input_cut", provider=shape.provider, model=shape.model, **cut.as_meta())
    return prompt, stop, cut


def fit(
    loaded: LoadedModel, request: ProviderRequest, shape: PromptShape
) -> tuple[Fitted, InputCut | None]:
    """The request's messages as a generation reads them: fitted to the prompt budget."""
    budget = shape.budget(request)
    try:
        return fit_messages(
            request.messages,
            count_tokens=lambda candidate: render(loaded, candidate, request, shape)[1],
            budget_tokens=budget,
        )
    except PromptDoesNotFit as exc:
        raise PromptTooLong(shape.provider, f"prompt budget {budget} tokens: {exc}") from exc


def count(
    loaded: LoadedModel | None, messages: Sequence[ChatMessage], max_tokens: int, shape: PromptShape
) -> int | None:
    """The messages' length as this model reads them (its template and tokenizer), without
    fitting them; None when the model is not loaded (nothing is loaded for a count)."""
    if loaded is None:
        return None
    request = ProviderRequest(messages=tuple(messages), max_tokens=max_tokens)
    return render(loaded, messages, request, shape)[1]


def render(
    loaded: LoadedModel,
    messages: Sequence[ChatMessage],
    request: ProviderRequest,
    shape: PromptShape,
) -> tuple[Prompt, int, list[str]]:
    """The messages as a prompt (tokens for a chat template; a transcript's text for base
    models, tokenized by llama.cpp as it always was), its length in tokens, and stops."""
    if loaded.template is None:
        transcript = render_transcript(
            messages, assistant_name=request.assistant_name, user_label=shape.user_label
        )
        length = len(loaded.llama.tokenize(transcript.prompt.encode("utf-8"), special=True))
        return transcript.prompt, length, list(transcript.stop)
    try:
        rendered = loaded.template.render(messages)
    except TemplateError as exc:
        raise ProviderError(shape.provider, str(exc)) from exc
    tokens = loaded.llama.tokenize(
        rendered.prompt.encode("utf-8"), add_bos=rendered.add_bos, special=True
    )
    return tokens, len(tokens), list(loaded.template.stop)
