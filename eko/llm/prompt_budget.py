"""Fit a conversation into a provider's prompt-token budget, saying what was cut.

A small local model reads a prompt at ~50 tokens/s on two cores: a 6,000-character message
would keep a person waiting minutes (and overflow the context). Instead the prompt is made
to fit: first the oldest conversation turns go, then the middle of the longest message is cut
(its start and its end stay: the question is usually at one or the other), down to a floor;
then the end of the system message (instructions come first there, the turn's context —
documents, memory — last). If the instructions' start alone does not fit, the prompt is too
long.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from eko.llm.types import ChatMessage

# The marker left where text was cut; the model sees it, so it knows a part is missing.
CUT_MARKER = "\n[… {chars} characters cut to fit …]\n"
# Of what is kept of a cut message, this share is its start; the rest is its end.
_HEAD_SHARE = 0.4
# A message is not cut below this many characters: past that, the instructions' end (the
# turn's context) is cut instead — the model must still see what it is asked.
MESSAGE_FLOOR = 600


@dataclass(frozen=True, slots=True)
class InputCut:
    """What fitting the prompt removed (counts only: the text is user data)."""

    budget_tokens: int
    original_tokens: int
    kept_tokens: int
    dropped_messages: int
    cut_chars: int
    # Of cut_chars, those cut from the system message's end: the turn's context (documents,
    # memory) — what memory selected and the reader did not read. Reported when not 0.
    context_cut_chars: int = 0

    def as_meta(self) -> dict[str, int]:
        meta = {
            "budget_tokens": self.budget_tokens,
            "original_tokens": self.original_tokens,
            "kept_tokens": self.kept_tokens,
            "dropped_messages": self.dropped_messages,
            "cut_chars": self.cut_chars,
        }
        if self.context_cut_chars:
            meta["context_cut_chars"] = self.context_cut_chars
        return meta


# Characters per token assumed when text is sized for a provider's prompt budget before it is
# tokenized (the memory section, eko/chat/engine/writer.py): below what French and English
# prose gives with Llama-family tokenizers (~3.5-4), so what is sized to fit fits.
CHARS_PER_TOKEN = 3.0
# A chat template's tokens around each message (role markers), in characters.
MESSAGE_OVERHEAD_CHARS = 24


def approx_prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    """The tokens of `messages` as the product sizes them without a tokenizer: each message's
    characters and its template overhead at CHARS_PER_TOKEN, rounded up (what the memory
    section is sized by, eko/chat/engine/writer.py)."""
    return sum(
        math.ceil((len(m.content) + MESSAGE_OVERHEAD_CHARS) / CHARS_PER_TOKEN) for m in messages
    )


def prompt_budget_tokens(provider: object, *, max_tokens: int) -> int | None:
    """The prompt tokens `provider` reads at most for an answer of `max_tokens` (the local
    model: EKO_LOCAL_MAX_PROMPT_TOKENS within its context window less the answer, as its
    PromptShape.budget in eko/llm/providers/local_prompt.py); None when it declares no limit."""
    limit = getattr(provider, "max_prompt_tokens", None)
    n_ctx = getattr(provider, "n_ctx", None)
    budgets = [int(limit)] if isinstance(limit, int) and limit > 0 else []
    if isinstance(n_ctx, int) and n_ctx > 0:
        budgets.append(max(n_ctx - max_tokens, 1))
    return min(budgets) if budgets else None


def count_prompt_tokens(
    provider: object, messages: Sequence[ChatMessage], *, max_tokens: int
) -> tuple[int, bool]:
    """`messages`' tokens as `provider` reads them, and whether its own tokenizer counted them
    (a provider with `count_prompt_tokens`, the local model once loaded); else the estimate
    the product sizes text by (approx_prompt_tokens)."""
    count = getattr(provider, "count_prompt_tokens", None)
    counted = count(messages, max_tokens=max_tokens) if callable(count) else None
    if isinstance(counted, int):
        return counted, True
    return approx_prompt_tokens(messages), False


class PromptDoesNotFit(ValueError):
    """Even with every cuttable part removed, the prompt exceeds the budget."""


def fit_messages(
    messages: Sequence[ChatMessage],
    *,
    count_tokens: Callable[[Sequence[ChatMessage]], int],
    budget_tokens: int,
) -> tuple[tuple[ChatMessage, ...], InputCut | None]:
    """`messages` unchanged when they fit `budget_tokens` (as counted by `count_tokens`, the
    whole rendered prompt), else a shortened copy and what was cut."""
    kept = list(messages)
    original = count_tokens(kept)
    if original <= budget_tokens:
        return tuple(messages), None
    total = original
    dropped = 0
    # 1. Older turns: every non-system message but the last one, oldest first.
    while total > budget_tokens:
        index = _oldest_droppable(kept)
        if index is None:
            break
        del kept[index]
        dropped += 1
        total = count_tokens(kept)
    cut_chars = context_cut = 0
    # 2. The middle of the longest remaining non-system message, down to a floor.
    index = _longest_cuttable(kept)
    if total > budget_tokens and index is not None:
        kept, cut, total = _shrink(
            kept, index, count_tokens, budget_tokens, _middle_cut, floor_chars=MESSAGE_FLOOR
        )
        cut_chars += cut
    # 3. The end of the longest system message: instructions come first there, the turn's
    # context (documents, memory) last — what goes first when nothing else is left to cut.
    # Its first half (the instructions) always stays.
    system_index = _longest(kept, system=True) if total > budget_tokens else None
    if system_index is not None:
        floor = len(kept[system_index].content) // 2
        kept, context_cut, total = _shrink(
            kept, system_index, count_tokens, budget_tokens, _tail_cut, floor
        )
        cut_chars += context_cut
    # 4. The message below its floor, as a last resort.
    index = _longest_cuttable(kept)
    if total > budget_tokens and index is not None:
        kept, cut, total = _shrink(kept, index, count_tokens, budget_tokens, _middle_cut, 0)
        cut_chars += cut
    if total > budget_tokens:
        raise PromptDoesNotFit(f"{total} tokens for a {budget_tokens} budget")
    return tuple(kept), InputCut(budget_tokens, original, total, dropped, cut_chars, context_cut)


def _oldest_droppable(messages: list[ChatMessage]) -> int | None:
    last = len(messages) - 1
    for index, message in enumerate(messages):
        if message.role != "system" and index != last:
            return index
    return None


def _longest_cuttable(messages: list[ChatMessage]) -> int | None:
    return _longest(messages, system=False)


def _longest(messages: list[ChatMessage], *, system: bool) -> int | None:
    candidates = [
        (len(m.content), i) for i, m in enumerate(messages) if (m.role == "system") == system
    ]
    return max(candidates)[1] if candidates else None


def _middle_cut(text: str, keep: int) -> str:
    """Its start and its end, around a marker (a message's question is at one or the other)."""
    head = int(keep * _HEAD_SHARE)
    tail = keep - head
    return text[:head] + CUT_MARKER.format(chars=len(text) - keep) + (text[-tail:] if tail else "")


def _tail_cut(text: str, keep: int) -> str:
    """Its start only (instructions first, context last)."""
    return text[:keep] + CUT_MARKER.format(chars=len(text) - keep)


def _shrink(
    messages: list[ChatMessage],
    index: int,
    count_tokens: Callable[[Sequence[ChatMessage]], int],
    budget_tokens: int,
    shape: Callable[[str, int], str],
    floor_chars: int,
) -> tuple[list[ChatMessage], int, int]:
    """messages[index] shortened by `shape` to the most characters that fit (binary search),
    never below `floor_chars` (then the caller cuts elsewhere next). Returns the messages,
    the characters cut and the new total."""
    text = messages[index].content
    floor_chars = min(floor_chars, len(text))

    def with_kept(keep: int) -> list[ChatMessage]:
        trial = list(messages)
        trial[index] = replace(messages[index], content=shape(text, keep))
        return trial

    floor = with_kept(floor_chars)
    if count_tokens(floor) > budget_tokens:
        return floor, len(text) - floor_chars, count_tokens(floor)
    low, high = floor_chars, len(text) - 1  # keeping `low` characters fits, `high` does not
    while high - low > 16:  # to within a few characters: tokenizing is the costly part
        middle = (low + high) // 2
        if count_tokens(with_kept(middle)) <= budget_tokens:
            low = middle
        else:
            high = middle
    best = with_kept(low)
    return best, len(text) - low, count_tokens(best)
