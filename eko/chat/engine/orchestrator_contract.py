"""What the orchestrator's model call must answer: two output contracts, one proposal.

- **full** — the seed's universal contract, for a capable (remote) model:

      {confidence, decision, notes, payload: {intent, context_level, need_web,
       web_search_prompt, scope_need, scopes_selected}}

- **compact** — for a small local model, where every generated token is a forward pass on the
  CPU (~65 ms each for the bundled 1.5B on two cores): only what the backend acts on,

      {intent, context_level[, web_search][, scopes]}

  `web_search` (a query, empty for none) only when a web search provider is configured and
  `scopes` only when documentation scopes exist. Under the JSON grammar the full contract costs
  ~70 generated tokens per message, mostly its structure; the compact one ~15-25. It asks for
  no confidence: a proposal that parses is handed to the guardrails, which decide as always.

Every string is bounded and intent / context_level are enums: under a JSON grammar a small
model fills strings up to their bound, and each character costs generation time.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model

from eko.chat.engine.decision import ContextLevel, Intent, Proposal

__all__ = [
    "COMPACT_CONFIDENCE",
    "CONFIDENCE_STEPS",
    "CompactOrchestratorOutput",
    "OrchestratorOutput",
    "compact_output_model",
    "output_model",
    "to_proposal",
]

# Confidence is asked on a 0.05 grid: a JSON number has no length bound in a grammar, and a
# small model happily writes 0.99999999… (a token per digit). Validation takes any float in [0, 1].
CONFIDENCE_STEPS = [round(step * 0.05, 2) for step in range(21)]
Confidence = Annotated[
    float, Field(ge=0, le=1), WithJsonSchema({"type": "number", "enum": CONFIDENCE_STEPS})
]
# The compact contract asks for no confidence: a valid answer passes the confidence gate.
COMPACT_CONFIDENCE = 1.0


class OrchestratorPayload(BaseModel):
    model_config = ConfigDict(extra="forbid")
    intent: Intent
    context_level: ContextLevel
    need_web: bool
    web_search_prompt: str = Field(max_length=100)
    scope_need: bool
    # Narrowed to the existing scope names for each call (see output_model).
    scopes_selected: list[Annotated[str, Field(max_length=64)]] = Field(max_length=3)


class OrchestratorOutput(BaseModel):
    """The seed's output contract; the backend trusts it only at confidence >= 0.8."""

    model_config = ConfigDict(extra="forbid")
    confidence: Confidence
    decision: str = Field(max_length=32)
    notes: str = Field(max_length=80)
    payload: OrchestratorPayload


class CompactOrchestratorOutput(BaseModel):
    """The compact contract's always-present fields (see compact_output_model)."""

    model_config = ConfigDict(extra="forbid")
    intent: Intent
    context_level: ContextLevel


def _scope_item(scopes: tuple[str, ...]) -> Any:
    # Always an "enum" (pydantic writes "const" for one value, which some grammars lack).
    return (
        Annotated[Literal[scopes], WithJsonSchema({"type": "string", "enum": list(scopes)})]
        if scopes
        else Annotated[str, Field(max_length=1)]
    )


def _scope_list(scopes: tuple[str, ...]) -> Any:
    item = _scope_item(scopes)
    return list[item]  # type: ignore[valid-type]


@lru_cache(maxsize=64)
def output_model(scopes: tuple[str, ...]) -> type[OrchestratorOutput]:
    """The full contract with scopes_selected as an enum of the existing scope names (none:
    an empty list), so the model cannot invent a scope and its grammar stays short."""
    payload = create_model(
        "OrchestratorPayload",
        __base__=OrchestratorPayload,
        scopes_selected=(_scope_list(scopes), Field(max_length=min(3, len(scopes)))),
    )
    model: type[OrchestratorOutput] = create_model(
        "OrchestratorOutput", __base__=OrchestratorOutput, payload=(payload, ...)
    )
    return model


@lru_cache(maxsize=64)
def compact_output_model(scopes: tuple[str, ...], *, web: bool) -> type[CompactOrchestratorOutput]:
    """The compact contract: `web_search` only when `web`, `scopes` only when there are some."""
    fields: dict[str, Any] = {}
    if web:
        fields["web_search"] = (str, Field(max_length=60))
    if scopes:
        fields["scopes"] = (_scope_list(scopes), Field(max_length=min(3, len(scopes))))
    model: type[CompactOrchestratorOutput] = create_model(
        "CompactOrchestratorOutput", __base__=CompactOrchestratorOutput, **fields
    )
    return model


def to_proposal(data: BaseModel) -> Proposal | None:
    """The proposal of either contract's answer (None for anything else)."""
    if isinstance(data, OrchestratorOutput):
        payload = data.payload
        return Proposal(
            intent=payload.intent,
            context_level=payload.context_level,
            need_web=payload.need_web,
            web_search_prompt=payload.web_search_prompt,
            scope_need=payload.scope_need,
            scopes_selected=tuple(payload.scopes_selected),
            confidence=data.confidence,
            decision=data.decision,
            notes=data.notes,
        )
    if isinstance(data, CompactOrchestratorOutput):
        web_search = str(getattr(data, "web_search", "") or "").strip()
        scopes = tuple(getattr(data, "scopes", ()) or ())
        return Proposal(
            intent=data.intent,
            context_level=data.context_level,
            need_web=bool(web_search),
            web_search_prompt=web_search,
            scope_need=bool(scopes),
            scopes_selected=scopes,
            confidence=COMPACT_CONFIDENCE,
            decision="compact",
        )
    return None
