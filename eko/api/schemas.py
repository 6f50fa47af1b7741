"""Request and response bodies of the HTTP API."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from eko.store.models import Message, Room, User

# Integer query parameters stop here: the largest integer every JSON client represents exactly,
# well inside both databases' 64-bit integers (an unbounded one overflowed into a 500).
MAX_QUERY_INT = 2**53 - 1
# Nesting allowed in a free-form JSON value (a fact): deep enough for any real value, shallow
# enough that no recursive encoder down the line runs out of stack.
MAX_JSON_DEPTH = 32

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def reject_unstorable_text(value: str) -> str:
    """NUL and lone UTF-16 surrogates (JSON `\\u0000`, `\\ud800`) cannot be stored: PostgreSQL
    text refuses NUL and no UTF-8 encoding has a surrogate. Refused up front (422), so nothing
    is half-stored."""
    found = _UNSTORABLE.search(value)
    if found is not None:
        what = "NUL characters" if found.group() == "\x00" else "lone UTF-16 surrogates"
        raise ValueError(f"{what} are not accepted (U+{ord(found.group()):04X})")
    return value


def reject_unstorable_json(value: Any) -> Any:
    """The same rule for a free-form JSON value, keys included, plus what a JSON column cannot
    hold: NaN and infinities, and nesting deeper than MAX_JSON_DEPTH."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:  # iterative: a deep value must not exhaust the stack here either
        item, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"JSON values nested deeper than {MAX_JSON_DEPTH} are not accepted")
        if isinstance(item, str):
            reject_unstorable_text(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError("NaN and infinite numbers are not accepted")
        elif isinstance(item, dict):
            for key, child in item.items():
                reject_unstorable_text(str(key))
                pending.append((child, depth + 1))
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return value


# Every text field a client sends has this type (length limits stay per field), every
# free-form JSON value the second.
InputText = Annotated[str, AfterValidator(reject_unstorable_text)]
InputJson = Annotated[Any, AfterValidator(reject_unstorable_json)]


class UserOut(BaseModel):
    public_id: str
    display_name: str
    role: str
    is_pro: bool
    free_quota_used: int
    free_quota_limit: int
    settings: dict[str, Any]

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


class UserCreated(BaseModel):
    user: UserOut
    api_key: str


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

    @classmethod
    def of(cls, room: Room, *, title: str | None = None) -> RoomOut:
        return cls(
            id=room.id,
            kind=room.kind,
            name=room.name,
            title=title or room.name,
            persona=room.persona,
            created_at=room.created_at,
        )


class RoomUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: InputText = Field(min_length=1, max_length=200)


class MemberAdd(BaseModel):
    model_config = ConfigDict(extra="forbid")
    public_id: InputText = Field(min_length=1, max_length=64)


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
