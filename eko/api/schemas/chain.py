"""Bodies of POST /v1/chat: the seed's `{reply, mode, turns, chain, tools_used}` shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
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


class ChatOut(BaseModel):
    reply: str | None
    mode: Literal["simple", "reflexive"]
    # Model turns used: the chain's turns; 1 for a simple answer a model wrote, 0 otherwise.
    turns: int
    chain: list[StageOut]
    tools_used: list[ToolUseOut]
    skipped: list[SkippedStageOut] = Field(default_factory=list)
    # The classifier rule that chose the mode (eko/chain/classify.py).
    rule: str | None = None
    room_id: str
    user_message_id: str
    assistant_message_id: str | None

    @classmethod
    def of(cls, user_message: Message, reply: Message | None) -> ChatOut:
        meta: dict[str, Any] = dict(reply.meta or {}) if reply is not None else {}
        complexity = meta.get("complexity") or {}
        chain = meta.get("chain") if complexity.get("mode") == "reflexive" else None
        common = {
            "room_id": user_message.room_id,
            "user_message_id": user_message.id,
            "assistant_message_id": reply.id if reply is not None else None,
            "rule": complexity.get("rule"),
            "reply": reply.content if reply is not None else None,
        }
        if chain and not complexity.get("chain_fallback"):
            return cls(
                mode="reflexive",
                turns=int(chain.get("turns") or 0),
                chain=chain.get("chain") or [],
                tools_used=chain.get("tools_used") or [],
                skipped=chain.get("skipped") or [],
                **common,
            )
        return cls(
            mode="simple",
            turns=1 if meta.get("provider") else 0,
            chain=[],
            tools_used=[],
            **common,
        )
