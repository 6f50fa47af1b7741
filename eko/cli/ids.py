"""What a person types for an id — the full id or any unique prefix of it, like git — to one row.

Ids are 32 hex characters: nobody retypes them, and a terminal table may not show them whole.
Every command that takes an id resolves it here, so they all accept the same things and fail
the same way: unknown → exit 1; ambiguous → exit 1 with the candidates listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from eko.cli.common import fail
from eko.store.models import User

# Shorter prefixes match too much to be meant; they are refused rather than guessed.
MIN_PREFIX = 4
# Candidates listed when a prefix is ambiguous.
MAX_CANDIDATES = 10


class UnknownId(LookupError):
    def __init__(self, given: str) -> None:
        super().__init__(given)
        self.given = given


class AmbiguousId(LookupError):
    def __init__(self, given: str, candidates: Sequence[str]) -> None:
        super().__init__(given)
        self.given = given
        self.candidates = list(candidates)


async def resolve_id(session: AsyncSession, column: InstrumentedAttribute[str], given: str) -> str:
    """The one id in `column` equal to `given`, or starting with it."""
    wanted = given.strip()
    if not wanted:
        raise UnknownId(given)
    exact = await session.execute(select(column).where(column == wanted))
    if exact.first() is not None:
        return wanted
    if len(wanted) < MIN_PREFIX:
        raise UnknownId(given)
    result = await session.execute(
        select(column)
        .where(column.startswith(wanted, autoescape=True))
        .order_by(column)
        .limit(MAX_CANDIDATES + 1)
    )
    matches = list(result.scalars().all())
    if not matches:
        raise UnknownId(given)
    if len(matches) > 1:
        raise AmbiguousId(given, matches)
    return matches[0]


async def resolve_id_or_exit(
    session: AsyncSession,
    column: InstrumentedAttribute[str],
    given: str,
    *,
    what: str,
    listing: str,
) -> str:
    """`resolve_id`, or exit 1 with a message naming `what` and the command that lists them."""
    try:
        return await resolve_id(session, column, given)
    except UnknownId:
        fail(
            f"no {what} {given!r}",
            fix=f"see `{listing}` (a full id or a unique prefix of at least {MIN_PREFIX})",
        )
    except AmbiguousId as exc:
        _ambiguous(what, exc)


async def resolve_user(session: AsyncSession, given: str) -> User:
    """A user by public id (or a unique prefix of it) or by display name; exit 1 otherwise."""
    wanted = given.strip()
    by_id = await session.execute(select(User).where(User.public_id == wanted))
    user = by_id.scalar_one_or_none()
    if user is not None:
        return user
    named = await _users_named(session, User.display_name == wanted)
    if not named:  # "camille" finds Camille, unless the case is what tells two users apart
        named = await _users_named(session, func.lower(User.display_name) == wanted.lower())
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        candidates = [f"{u.public_id} ({u.display_name})" for u in named]
        _ambiguous("user", AmbiguousId(given, candidates), fix="name the user by public id")
    public_id = await resolve_id_or_exit(
        session, User.public_id, wanted, what="user", listing="eko users list"
    )
    found = await session.execute(select(User).where(User.public_id == public_id))
    return found.scalar_one()


async def _users_named(session: AsyncSession, condition: ColumnElement[bool]) -> list[User]:
    result = await session.execute(
        select(User).where(condition).order_by(User.id).limit(MAX_CANDIDATES + 1)
    )
    return list(result.scalars().all())


def _ambiguous(
    what: str, exc: AmbiguousId, *, fix: str = "give more characters of the id"
) -> NoReturn:
    shown = exc.candidates[:MAX_CANDIDATES]
    more = " …" if len(exc.candidates) > MAX_CANDIDATES else ""
    fail(f"{exc.given!r} names more than one {what}: {', '.join(shown)}{more}", fix=fix)
