"""What every writer shares: the safe fallback Draft and the provenance of a model's answer."""

from __future__ import annotations

from typing import Any

from eko.chat.pipeline import Draft
from eko.chat.reply_meta import ReplyMeta
from eko.llm.types import Completion
from eko.prompts.library import PromptLibrary


def fallback_draft(prompts: PromptLibrary, reason: str, **meta: Any) -> Draft:
    """The safe answer when no model could write one; the reason goes to metadata."""
    return Draft(
        content=prompts.text("system/fallback_answer.md"),
        type="fallback",
        meta=ReplyMeta(fallback=reason, **meta),
    )


def provenance(completion: Completion[Any]) -> dict[str, Any]:
    """Which provider and model answered, with usage, duration and every attempt."""
    return {
        "provider": completion.provider,
        "model": completion.model,
        "usage": {
            "input_tokens": completion.usage.input_tokens,
            "output_tokens": completion.usage.output_tokens,
        },
        "duration_ms": round(completion.duration_ms, 1),
        "fallback_used": completion.fallback_used,
        "truncated": completion.truncated,
        # The provider cut the prompt to fit its budget: the answer saw only part of the input.
        **({"input_cut": completion.input_cut.as_meta()} if completion.input_cut else {}),
        "attempts": [
            {"provider": a.provider, "model": a.model, "outcome": a.outcome, "error": a.error}
            for a in completion.attempts
        ],
    }
