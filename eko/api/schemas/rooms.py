"""Request and response bodies of the users and rooms routes (members, messages, model calls)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.store.models import Message, Room, User


class UserOut(BaseModel):
    public_id: str
    display_name: str
    role: str
    is_pro: bool
    free_quota_used: int
    free_quota_limit: int
    settings: dict[str, Any]
    # Signs in with a password (the page); otherwise only with API keys.
    has_password: bool = False

    @classmethod
    def of(cls, user: User) -> UserOut:
        return cls(
            public_id=user.public_id,
            display_name=user.display_name,
            role=user.role,
            is_pro=user.is_pro,
            free_quota_used=user.free_quota_used,
            free_quota_limit=user.free_quota_limit,
            settings=user.settings or {},
            has_password=user.password_hash is not None,
        )


class UserUpdate(BaseModel):
    """PATCH /v1/me: only the fields sent change."""

    model_config = ConfigDict(extra="forbid")
    display_name: InputText | None = Field(default=None, min_length=1, max_length=200)
    language: Literal["fr", "en"] | None = None


class UserCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    display_name: InputText = Field(min_length=1, max_length=200)
    role: Literal["member", "staff"] = "member"
    is_pro: bool = False
    # With a password: the person signs in on the page with their name (case-insensitive) and
    # it; no API key is made. Without: the answer carries their first API key.
    password: str | None = Field(default=None, min_length=1, max_length=1000)


class UserCreated(BaseModel):
    user: UserOut
    # Shown once; None for a user created with a password.
    api_key: str | None


class RoomCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["direct", "lobby"] = "direct"
    name: InputText | None = Field(default=None, max_length=200)
    persona: InputText | None = Field(default=None, max_length=100)


class RoomOut(BaseModel):
    id: str
    kind: str
    name: str
    # What a client lists: the name, or the first user message (trimmed) while the name is
    # still the default one (eko/store/rooms.py: room_title).
    title: str
    persona: str
    created_at: datetime
    # The conversation's instructions (set in the page, or an OpenAI client's system message).
    instructions: str | None = None

    @classmethod
    def of(cls, room: Room, *, title: str | None = None) -> RoomOut:
        return cls(
            id=room.id,
            kind=room.kind,
            name=room.name,
            title=title or room.name,
            persona=room.persona,
            created_at=room.created_at,
            instructions=room.instructions,
        )


# The longest per-conversation instructions the page (PATCH /v1/rooms/{id}) stores.
MAX_INSTRUCTIONS_CHARS = 4000


class RoomUpdate(BaseModel):
    """PATCH /v1/rooms/{id}: only the fields sent change (at least one)."""

    model_config = ConfigDict(extra="forbid")
    name: InputText | None = Field(default=None, min_length=1, max_length=200)
    # The conversation's instructions (a system prompt, under the persona and the rules, as an
    # OpenAI client's system message is); "" or null clears them.
    instructions: InputText | None = Field(default=None, max_length=MAX_INSTRUCTIONS_CHARS)


class MemberAdd(BaseModel):
    """Who to add: a public id, or a name (sign-in name or display name; see the
    member-suggestions route)."""

    model_config = ConfigDict(extra="forbid")
    public_id: InputText | None = Field(default=None, min_length=1, max_length=64)
    name: InputText | None = Field(default=None, min_length=1, max_length=200)


class MessageCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # The length limit is config (EKO_MAX_MESSAGE_CHARS), checked by the service -> 413.
    content: InputText
    # Optional client-side id: posting the same one twice stores one message (idempotency).
    client_message_id: InputText | None = Field(default=None, min_length=1, max_length=100)


class MessageOut(BaseModel):
    id: str
    room_id: str
    seq: int
    role: str
    type: str
    sender_public_id: str | None = None
    content: str
    reasoning: str | None
    tool_calls: list[dict[str, Any]] | None
    metadata: dict[str, Any]
    char_count: int
    reply_to_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, message: Message, *, sender_public_id: str | None = None) -> MessageOut:
        return cls(
            id=message.id,
            room_id=message.room_id,
            seq=message.seq,
            role=message.role,
            type=message.type,
            sender_public_id=sender_public_id,
            content=message.content,
            reasoning=message.reasoning,
            tool_calls=message.tool_calls,
            metadata=message.meta or {},
            char_count=message.char_count,
            reply_to_id=message.reply_to_id,
            created_at=message.created_at,
        )


class ExchangeOut(BaseModel):
    user_message: MessageOut
    assistant_message: MessageOut | None
    created: bool
    # Stored and owed an answer that could not be written yet (the database was busy or
    # unreachable): it arrives later, as a message.created event and in the room's messages.
    answer_pending: bool = False


class MessagePage(BaseModel):
    items: list[MessageOut]
    # Pass as ?before= to get the previous (older) page; null when there is none.
    next_before: int | None


class LLMCallOut(BaseModel):
    id: int
    purpose: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    duration_ms: float
    outcome: str
    error: str | None
    room_id: str | None
    message_id: str | None
    created_at: datetime


class ImportedMessage(BaseModel):
    """One turn of an imported history (POST /v1/rooms/{id}/messages:import)."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    # The length limit is config (EKO_MAX_MESSAGE_CHARS), checked with the rest -> 422.
    content: InputText
    # When it was said (ISO 8601; without a zone: UTC). Absent: now.
    created_at: datetime | None = None
    # Who said it, as shown and remembered ("Caroline"); absent: the importing user for a user
    # turn, the assistant's name for an assistant turn.
    name: InputText | None = Field(default=None, max_length=100)
    # Per-message idempotency: the same id again (same content) stores nothing new.
    client_message_id: InputText | None = Field(default=None, min_length=1, max_length=100)


class MessagesImport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # In the order they were said (stored with increasing seq in this order).
    messages: list[ImportedMessage] = Field(min_length=1)


class ImportOut(BaseModel):
    # Stored now; the others were imported before (same client ids).
    imported: int
    already_imported: int
    first_seq: int
    last_seq: int
    # The job embedding the new turns for recall by meaning (progress: memory.indexing events
    # on /v1/events, then memory.indexed); null when nothing is new or a queued job covers them.
    index_job_id: int | None
