"""The metadata of an assistant reply: one typed object, serialised once when the reply is stored.

Every stage of the message path (short-circuits, the engine, the chain, the live stream) sets
its keys on the Draft's `ReplyMeta`; a key no field declares is an error at the stage that
sets it, not a surprise for the API, the page or the guard that read the stored JSON. Only
the keys that were set are stored (`to_json`), so a reply keeps the shape it always had.
The nested reports (the orchestrator's decision, the plan, each node, the chain, the guard's
hit) are their owners' `to_meta()` dicts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from eko.chat.grounding.report import GroundingReport


class ReplyMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # The short-circuit that answered (quota paywall, memory guard); unset: the writer did.
    answered_by: str | None = None
    # The orchestrator's decision and what the writer was given.
    intent: str | None = None
    mode: str | None = None
    personal_context: bool | None = None
    personal_context_sources: list[str] | None = None
    smalltalk_target_key: str | None = None
    flags: dict[str, bool] | None = None
    orchestrator: dict[str, Any] | None = None
    plan: list[dict[str, Any]] | None = None
    nodes: dict[str, Any] | None = None
    docs: dict[str, Any] | None = None
    web: dict[str, Any] | None = None
    quota: dict[str, Any] | None = None
    learned_facts: list[dict[str, Any]] | None = None
    engine: dict[str, Any] | None = None
    # Why the safe answer was given instead of a model's (eko/chat/reply.py), and the error.
    fallback: str | None = None
    error: str | None = None
    # The fallback's cause in a person's words (eko/llm/types.py: FailureCause): busy,
    # timeout, unreachable or error; the page shows it under the answer.
    fallback_cause: str | None = None
    # Which provider and model wrote the answer (eko/chat/reply.py: provenance).
    provider: str | None = None
    model: str | None = None
    usage: dict[str, int] | None = None
    duration_ms: float | None = None
    fallback_used: bool | None = None
    truncated: bool | None = None
    input_cut: dict[str, Any] | None = None
    attempts: list[dict[str, Any]] | None = None
    # A streamed reply stopped by the person, or broken after it began (eko/chat/streaming.py).
    stopped: bool | None = None
    incomplete: bool | None = None
    stream_error: str | None = None
    # The reflexive chain: the message's classification and the chain's own report.
    complexity: dict[str, Any] | None = None
    chain: dict[str, Any] | None = None
    # What an API caller asked the reply to be (eko/llm/caller_format.py): "json_object",
    # "json_schema" or "tools". Such a reply is never cached by the memory guard.
    caller_format: str | None = None
    # The room had a caller's instructions (an OpenAI client's system message): the reply
    # follows them, so it is nobody else's answer (never served from nor learned by the cache).
    caller_instructions: bool | None = None
    # A question about the user's life: whether memory held its subject, the writer's note,
    # and the check after the writer (flagged / corrected; eko/chat/grounding).
    grounding: GroundingReport | None = None
    # Sentences of the model's reply removed because they said something was stored
    # (eko/chat/grounding/storage_claims.py): memory is written after the reply, if at all.
    storage_claims_removed: list[str] | None = None
    # A cached answer served by the memory guard.
    action: str | None = None
    memory_guard: dict[str, Any] | None = None

    def set(self, **values: Any) -> None:
        """Set several keys at once (each one is checked against its field)."""
        for name, value in values.items():
            if name not in type(self).model_fields:
                raise AttributeError(f"ReplyMeta has no key {name!r}")
            setattr(self, name, value)

    def clear(self, *names: str) -> None:
        """Take keys out: they are stored as absent, not as null."""
        for name in names:
            setattr(self, name, type(self).model_fields[name].default)
            self.model_fields_set.discard(name)

    def to_json(self) -> dict[str, Any]:
        """The stored form: only the keys that were set, nulls included when set to None."""
        return self.model_dump(exclude_unset=True)
