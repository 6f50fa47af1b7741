"""Short-lived tokens for browsers, which cannot set an Authorization header on a WebSocket or
an EventSource: `POST /v1/events/token` (with the API key) returns one for `?token=`.

A token is `<user public id>.<expiry>.<HMAC>`, keyed by the user's random per-user secret
(`users.api_key_hash`, no longer a key anyone holds: keys live in api_keys): every worker can
check it with no shared secret and no table, and revoking a key renews the secret, which voids
old tokens.
A connection opened with a token ends when the token expires (eko.api.routers.events).
"""

from __future__ import annotations

import hashlib
import hmac
import time

from sqlalchemy.ext.asyncio import AsyncSession

from eko.store import users as user_repo
from eko.store.models import User


def _signature(user: User, expires: int) -> str:
    message = f"{user.public_id}.{expires}".encode()
    return hmac.new(user.api_key_hash.encode(), message, hashlib.sha256).hexdigest()


def issue(user: User, *, ttl_s: int, now: float | None = None) -> tuple[str, int]:
    """The token and its expiry (Unix seconds)."""
    expires = int((now if now is not None else time.time()) + ttl_s)
    return f"{user.public_id}.{expires}.{_signature(user, expires)}", expires


async def verify(session: AsyncSession, token: str, *, now: float | None = None) -> User | None:
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    public_id, expires_text, signature = parts
    expires = int(expires_text)
    if expires < (now if now is not None else time.time()):
        return None
    user = await user_repo.get_by_public_id(session, public_id=public_id)
    if user is None or not hmac.compare_digest(signature, _signature(user, expires)):
        return None
    return user


def expires_at(token: str) -> int | None:
    """The expiry (Unix seconds) written in `token`, unchecked: read it only from a token that
    `verify` accepted."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    return int(parts[1])
