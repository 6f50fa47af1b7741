"""Request and response bodies of accounts: sign-in, sessions, invitations, API keys."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from eko.api.schemas.inputs import InputText
from eko.api.schemas.rooms import UserOut
from eko.store.account_models import ApiKey, Invitation


class Credentials(BaseModel):
    """A name and a password: first-run setup, sign-in, accepting an invitation."""

    model_config = ConfigDict(extra="forbid")
    name: InputText = Field(min_length=1, max_length=100)
    # Its length rule is a setting (EKO_PASSWORD_MIN_CHARS), checked by the service -> 422.
    password: str = Field(min_length=1, max_length=1000)


class SessionState(BaseModel):
    """What the page needs at load: who is signed in (by cookie), or whether the server still
    needs its operator (no user yet: the page offers to create it)."""

    signed_in: bool
    setup_needed: bool
    user: UserOut | None = None
    # Sent back in X-CSRF-Token on every write made with the cookie.
    csrf_token: str | None = None
    expires_at: datetime | None = None


class SessionOut(BaseModel):
    """A signed-in page: the cookie is set (HttpOnly); writes send `csrf_token` in
    X-CSRF-Token."""

    user: UserOut
    csrf_token: str
    expires_at: datetime


class InvitationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["member", "staff"] = "member"
    is_pro: bool = False


class InvitationOut(BaseModel):
    id: str
    role: str
    is_pro: bool
    created_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, row: Invitation) -> InvitationOut:
        return cls(
            id=row.public_id,
            role=row.role,
            is_pro=row.is_pro,
            created_at=row.created_at,
            expires_at=row.expires_at,
        )


class InvitationCreated(InvitationOut):
    # Shown once: the token and the page's link that carries it.
    token: str
    link: str


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: InputText = Field(default="key", min_length=1, max_length=100)


class KeyOut(BaseModel):
    id: str
    name: str
    # The key's first characters, to tell keys apart.
    prefix: str
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, row: ApiKey) -> KeyOut:
        return cls(
            id=row.public_id,
            name=row.name,
            prefix=row.prefix,
            created_at=row.created_at,
            revoked_at=row.revoked_at,
        )


class KeyCreated(KeyOut):
    # Shown once; only its hash is stored.
    key: str


class UserAdminUpdate(BaseModel):
    """PATCH /v1/users/{id} (staff): only the fields sent change."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["member", "staff"] | None = None
    is_pro: bool | None = None
    free_quota_limit: int | None = Field(default=None, ge=0, le=1_000_000)


class NameSuggestion(BaseModel):
    public_id: str
    display_name: str
