"""Accounts: the operator's first-run creation, sign-in (rate-limited, the same answer and
about the same time for an unknown name as for a wrong password), sessions, invitations."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from eko.accounts.errors import AccountError, TooManyAttempts, bad_credentials
from eko.accounts.passwords import Passwords
from eko.config.accounts import AccountSettings
from eko.store import invitations as invitation_repo
from eko.store import signin_failures as failure_repo
from eko.store import users as user_repo
from eko.store import web_sessions as session_repo
from eko.store.account_models import Invitation, WebSession
from eko.store.db import Database
from eko.store.models import User

NAME_MAX_CHARS = 100
PASSWORD_MAX_CHARS = 1000


@dataclass(frozen=True)
class SignedIn:
    """A new session: the cookie's token (shown once), the CSRF token, the user, the expiry."""

    token: str
    csrf_token: str
    user: User
    expires_at: datetime


class Accounts:
    def __init__(
        self,
        database: Database,
        settings: AccountSettings,
        passwords: Passwords,
        *,
        default_free_quota_limit: int = 8,
    ) -> None:
        self._database = database
        self._settings = settings
        self._passwords = passwords
        self._free_quota_limit = default_free_quota_limit
        # One first-run creation at a time in this process (the count is checked inside).
        self._setup_lock = asyncio.Lock()

    # ---- first run ---------------------------------------------------------------------------

    async def needs_setup(self) -> bool:
        async with self._database.session() as session:
            return await user_repo.count_users(session) == 0

    async def create_operator(self, *, name: str, password: str) -> SignedIn:
        """The first account of a fresh install: staff and pro. Refused (409) once anyone
        exists."""
        name = self._check_name(name)
        self._check_password(password)
        password_hash = await self._passwords.hash(password)
        async with self._setup_lock, self._database.session() as session:
            if await user_repo.count_users(session) > 0:
                raise AccountError(
                    409, "already-set-up", "Already set up", "This server has its operator."
                )
            user, _ = await user_repo.create_user(
                session,
                display_name=name,
                role="staff",
                is_pro=True,
                free_quota_limit=self._free_quota_limit,
                password_hash=password_hash,
                with_key=False,
            )
            return await self._open(session, user)

    # ---- sign in / out -----------------------------------------------------------------------

    async def sign_in(self, *, name: str, password: str, address: str) -> SignedIn:
        key = user_repo.login_key(name)
        now = datetime.now(UTC)
        since = now - timedelta(seconds=self._settings.signin_window_s)
        async with self._database.session() as session:
            by_name = await failure_repo.failures_since(session, since=since, login_name=key)
            by_address = await failure_repo.failures_since(session, since=since, address=address)
            if (
                by_name >= self._settings.signin_max_failures_per_name
                or by_address >= self._settings.signin_max_failures_per_address
            ):
                raise TooManyAttempts(self._settings.signin_window_s)
            user = await user_repo.get_by_login_name(session, name=key) if key else None
        # Verified outside the transaction (argon2 takes a while); an unknown name is checked
        # against a dummy hash so that it takes as long as a wrong password.
        ok = await self._passwords.verify(user.password_hash if user else None, password)
        if not ok or user is None:
            async with self._database.session() as session:  # committed, then refused
                await failure_repo.record_failure(session, login_name=key, address=address, at=now)
                await failure_repo.prune(session, before=since)
            raise bad_credentials()
        async with self._database.session() as session:
            await failure_repo.forget_name(session, login_name=key)
            # Ended sessions are forgotten a day later (here and at sign-out).
            await session_repo.prune_sessions(session, before=now - timedelta(days=1))
            return await self._open(session, user)

    async def open_session(self, user: User) -> SignedIn:
        """A session for a user already authenticated another way (an API key)."""
        async with self._database.session() as session:
            return await self._open(session, user)

    async def session_user(self, token: str) -> tuple[WebSession, User] | None:
        async with self._database.session() as session:
            return await session_repo.find_session(session, token=token)

    async def sign_out(self, token: str) -> None:
        async with self._database.session() as session:
            await session_repo.revoke_session(session, token=token)
            await session_repo.prune_sessions(session, before=datetime.now(UTC) - timedelta(days=1))

    # ---- invitations -------------------------------------------------------------------------

    async def invite(self, *, staff: User, role: str, is_pro: bool) -> tuple[str, Invitation]:
        async with self._database.session() as session:
            return await invitation_repo.create_invitation(
                session,
                created_by=staff.id,
                role=role,
                is_pro=is_pro,
                ttl=timedelta(hours=self._settings.invitation_ttl_h),
            )

    async def open_invitation(self, token: str) -> Invitation | None:
        async with self._database.session() as session:
            return await invitation_repo.find_open(session, token=token)

    async def accept(self, *, token: str, name: str, password: str) -> SignedIn:
        """A new account from an open invitation, signed in; the invitation is used up."""
        name = self._check_name(name)
        self._check_password(password)
        password_hash = await self._passwords.hash(password)
        async with self._database.session() as session:
            invitation = await invitation_repo.find_open(session, token=token)
            if invitation is None or not await invitation_repo.claim(session, token=token):
                raise AccountError(
                    410,
                    "invitation-unusable",
                    "Invitation used or expired",
                    "Ask for a new invitation link.",
                )
            await self._claim_name(session, name)
            user, _ = await user_repo.create_user(
                session,
                display_name=name,
                role=invitation.role,
                is_pro=invitation.is_pro,
                free_quota_limit=self._free_quota_limit,
                password_hash=password_hash,
                with_key=False,
            )
            await invitation_repo.set_used_by(session, token=token, user_id=user.id)
            return await self._open(session, user)

    # ---- helpers -----------------------------------------------------------------------------

    async def create_with_password(
        self, *, name: str, password: str, role: str, is_pro: bool
    ) -> User:
        """Staff create someone directly: a name and a first password to hand over."""
        name = self._check_name(name)
        self._check_password(password)
        password_hash = await self._passwords.hash(password)
        async with self._database.session() as session:
            await self._claim_name(session, name)
            user, _ = await user_repo.create_user(
                session,
                display_name=name,
                role=role,
                is_pro=is_pro,
                free_quota_limit=self._free_quota_limit,
                password_hash=password_hash,
                with_key=False,
            )
            return user

    async def _open(self, session: AsyncSession, user: User) -> SignedIn:
        token, row = await session_repo.open_session(
            session, user_id=user.id, ttl=timedelta(hours=self._settings.session_ttl_h)
        )
        return SignedIn(token, row.csrf_token, user, row.expires_at)

    async def _claim_name(
        self, session: AsyncSession, name: str, *, user_id: int | None = None
    ) -> None:
        taken = await user_repo.get_by_login_name(session, name=name)
        if taken is not None and taken.id != user_id:
            raise AccountError(409, "name-taken", "Name taken", f"{name!r} is already used.")

    def _check_name(self, name: str) -> str:
        name = " ".join(name.split())
        if not name or len(name) > NAME_MAX_CHARS:
            raise AccountError(
                422, "bad-name", "Invalid name", f"A name has 1 to {NAME_MAX_CHARS} characters."
            )
        return name

    def _check_password(self, password: str) -> None:
        low = self._settings.password_min_chars
        if not low <= len(password) <= PASSWORD_MAX_CHARS:
            raise AccountError(
                422,
                "bad-password",
                "Password too short" if len(password) < low else "Password too long",
                f"A password has {low} to {PASSWORD_MAX_CHARS} characters.",
            )
