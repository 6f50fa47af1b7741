"""Request and response bodies of the chat engine's routes (chat, quota, profile, docs)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputJson, InputText
from eko.api.schemas.rooms import MessageOut
from eko.chat.engine.quota import QuotaStatus
from eko.store.chat_models import UserFact

_KEY = r"^[a-z][a-z0-9_]{0,99}$"
_NAME = r"^[a-z][a-z0-9_.-]{0,63}$"


class ChatMessageIn(BaseModel):
    """The seed's entry point: the client stored the user message first."""

    model_config = ConfigDict(extra="forbid")
    conversation_id: InputText = Field(min_length=1, max_length=64)
    user_message_id: InputText = Field(min_length=1, max_length=64)


class ChatMessageOut(BaseModel):
    conversation_id: str
    user_message_id: str
    # Null when the room does not answer this message (a lobby message not naming Eko).
    assistant_message_id: str | None
    assistant_message: MessageOut | None


class QuotaOut(BaseModel):
    """The seed's GET /v1/quota/{public_user_id} shape."""

    public_user_id: str
    is_pro: bool
    free_quota_used: int
    free_quota_limit: int
    state: Literal["normal", "warn_last_free", "blocked"]
    paywall_should_show: bool

    @classmethod
    def of(cls, status: QuotaStatus) -> QuotaOut:
        return cls(**status.to_meta())


class FactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: InputJson
    category: InputText = Field(default="profile", min_length=1, max_length=50)
    scope: InputText = Field(default="global", min_length=1, max_length=50)
    value_type: Literal["string", "boolean", "number", "json"] | None = None
    confidence: float = Field(default=1.0, ge=0, le=1)
    is_estimated: bool = False
    source_ref: InputText | None = Field(default=None, max_length=200)
    notes: InputText | None = Field(default=None, max_length=2000)


class FactOut(BaseModel):
    fact_key: str
    category: str
    scope: str
    value_type: str
    value: Any
    confidence: float
    is_estimated: bool
    source_ref: str | None
    notes: str | None
    updated_at: datetime

    @classmethod
    def of(cls, fact: UserFact) -> FactOut:
        return cls.model_validate(fact, from_attributes=True)


class AgentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    active: bool = True


class ServiceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connected: bool = True


class ProIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    is_pro: bool


class DiscoveryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    forced: bool
    status: Literal["not_started", "in_progress", "complete"] = "not_started"
    transition_window: InputText | None = Field(default=None, max_length=100)
    transition_reason: InputText | None = Field(default=None, max_length=200)


class ChatProfileOut(BaseModel):
    public_user_id: str
    is_pro: bool
    quota: QuotaOut
    facts: list[FactOut]
    required_keys: list[str]
    missing_required: list[str]
    agents: dict[str, bool]
    services: dict[str, bool]
    capabilities: dict[str, bool]
    capability_details: dict[str, Any]
    settings: dict[str, Any]


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: InputText = Field(min_length=1, max_length=300)
    text: InputText = Field(max_length=1_000_000)
    format: Literal["markdown", "text"] = "markdown"
    description: InputText | None = Field(default=None, max_length=2000)


class IngestOut(BaseModel):
    scope: str
    source: str
    chunks: int
    replaced: int


class ScopeOut(BaseModel):
    name: str
    description: str
    chunks: int
    sources: int


class DocHitOut(BaseModel):
    chunk_id: str
    scope: str
    source: str
    title: str
    content: str
    score: float


FACT_KEY_PATTERN = _KEY
NAME_PATTERN = _NAME
