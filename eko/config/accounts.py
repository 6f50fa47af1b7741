"""Settings of accounts in the browser (sign-in, sessions, invitations): a section of
eko.config.Settings (which inherits it, so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AccountSettings(BaseModel):
    # --- accounts (eko/accounts/) ---
    # How long a signed-in browser stays signed in (the session cookie's lifetime).
    session_ttl_h: int = Field(default=14 * 24, ge=1, le=366 * 24)
    # How long a staff invitation link can be used (once).
    invitation_ttl_h: int = Field(default=72, ge=1, le=90 * 24)
    # Refused sign-ins counted over this window: past either limit, sign-in answers 429
    # (per name typed, and per client address).
    signin_window_s: int = Field(default=900, ge=10, le=86_400)
    signin_max_failures_per_name: int = Field(default=5, ge=1, le=1000)
    signin_max_failures_per_address: int = Field(default=20, ge=1, le=10_000)
    # Shortest password accepted.
    password_min_chars: int = Field(default=8, ge=1, le=200)
