"""Bodies of POST /v1/chat: the seed's `{reply, mode, turns, chain, tools_used}` shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.chain.report import FallbackReason
from eko.store.models import Message


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: InputText = Field(min_length=1, description="The user's message.")
    room_id: InputText | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="A room of the caller; default: the caller's latest direct room (created "
        "when there is none).",
    )
    route: InputText | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="The message's category (code, archi, data-analyst, raisonnement, …): a "
        "reflexive category sends it through the chain, a simple one keeps it simple.",
    )


class ToolUseOut(BaseModel):
    name: str
    args: dict[str, Any]
    result: Any = None
    error: str | None = None


class StageOut(BaseModel):
    node: str
    model: str
    turns: int
    tools_used: list[ToolUseOut]
    duration_ms: float
    status: str
    stop_reason: str | None = None
    useful: bool


class SkippedStageOut(BaseModel):
    node: str
    reason: str


class ChainOut(BaseModel):
    """The chain's report as stored in the answer's metadata (`meta["chain"]`, written by
    eko.chat.chain_writer from eko.chain.report.ChainResult.to_meta): the API reads it back
    through this model instead of rebuilding it, so the two cannot disagree."""

    turns: int = 0
    chain: list[StageOut] = Field(default_factory=list)
    tools_used: list[ToolUseOut] = Field(default_factory=list)
    skipped: list[SkippedStageOut] = Field(default_factory=list)
    # Why the simple path wrote the reply instead of the chain (null when the chain wrote it).
    fallback: FallbackReason | None = None

    @classmethod
    def stored(cls, meta: dict[str, Any]) -> ChainOut | None:
        """The report of a message the chain ran for; None when it did not run."""
        complexity = meta.get("complexity") or {}
        chain = meta.get("chain")
        if complexity.get("mode") != "reflexive" or not isinstance(chain, dict):
            return None
        if complexity.get("chain_fallback") and chain.get("fallback") is None:
            # Stored before the report said why (the chain gave no reply).
            chain = {**chain, "fallback": "no_reply"}
        return cls.model_validate(chain)


class ChatOut(ChainOut):
    """The answer with the chain's report when the chain ran (`turns`: the chain's turns; for a
    simple answer 1 when a model wrote it, 0 otherwise)."""

    reply: str | None
    # reflexive: the chain ran (its report is here, also when it fell back); simple: it did not.
    mode: Literal["simple", "reflexive"]
    # The classifier rule that chose the mode (eko/chain/classify.py).
    rule: str | None = None
    room_id: str
    user_message_id: str
    assistant_message_id: str | None

    @classmethod
    def of(cls, user_message: Message, reply: Message | None) -> ChatOut:
        meta: dict[str, Any] = dict(reply.meta or {}) if reply is not None else {}
        common = {
            "room_id": user_message.room_id,
            "user_message_id": user_message.id,
            "assistant_message_id": reply.id if reply is not None else None,
            "rule": (meta.get("complexity") or {}).get("rule"),
            "reply": reply.content if reply is not None else None,
        }
        chain = ChainOut.stored(meta)
        if chain is not None:
            return cls(mode="reflexive", **chain.model_dump(), **common)
        return cls(mode="simple", turns=1 if meta.get("provider") else 0, **common)
