"""Password hashing with argon2id (argon2-cffi), off the event loop."""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Passwords:
    """Hash and verify passwords. `verify(None, …)` checks against a dummy hash, so an unknown
    name costs the same time as a wrong password."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()  # argon2id, RFC 9106's low-memory profile
        self._dummy = self._hasher.hash("not a password: the unknown name's stand-in")

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._hasher.hash, password)

    def hash_now(self, password: str) -> str:
        """For the command line, where there is no loop to keep free."""
        return self._hasher.hash(password)

    async def verify(self, stored: str | None, password: str) -> bool:
        return await asyncio.to_thread(self._check, stored, password)

    def _check(self, stored: str | None, password: str) -> bool:
        try:
            self._hasher.verify(stored or self._dummy, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return stored is not None
