"""Who may see which memory: the ONE place that turns a caller into visibility keys.

Every memory row (item, summary, topic) and its vector carry one scope key:

- ``user:<public id>``: one user's private memory, learned in their direct rooms;
- ``room:<room id>``: a room's memory. Everything learned in a lobby is lobby-scoped, and every
  room's summaries and topics are scoped to the room;
- ``global``: what every conversation may use (written by staff only).

Reads filter on a list of keys computed here, never anywhere else, so the isolation rule
(one user's private facts never reach another user; lobby talk stays in its lobby) holds in
one function per question: what may this turn use, where does it write, what may an API caller
list or delete.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from eko.store.models import Room, RoomMember, User

GLOBAL = "global"
USER_PREFIX = "user:"
ROOM_PREFIX = "room:"


def user_key(user: User) -> str:
    return f"{USER_PREFIX}{user.public_id}"


def room_key(room_id: str) -> str:
    return f"{ROOM_PREFIX}{room_id}"


def write_key(room: Room, user: User) -> str:
    """Where what `user` says in `room` is remembered: their private scope in a direct room,
    the room's scope in a lobby (said in front of everyone, known by everyone there)."""
    if room.kind == "direct":
        return user_key(user)
    return room_key(room.id)


def turn_keys(room: Room, user: User) -> list[str]:
    """What may be retrieved to answer `user` in `room`.

    Direct room: the user's private memory, the room's, global. A lobby: the lobby's and global
    only. The user's private memory would be shown to everyone present, and nobody else's
    private scope is ever listed.
    """
    if room.kind == "direct":
        return [user_key(user), room_key(room.id), GLOBAL]
    return [room_key(room.id), GLOBAL]


@dataclass(frozen=True, slots=True)
class Visibility:
    """What an API or CLI caller may list (`readable`) and delete or write (`writable`).
    `None` means every scope (staff, or the local CLI)."""

    readable: frozenset[str] | None
    writable: frozenset[str] | None

    def can_read(self, scope: str) -> bool:
        return self.readable is None or scope in self.readable

    def can_write(self, scope: str) -> bool:
        return self.writable is None or scope in self.writable

    def filter(self, scope: str | None) -> list[str] | None:
        """The keys a listing may use, narrowed to `scope` when given (empty: nothing visible)."""
        if scope is not None:
            return [scope] if self.can_read(scope) else []
        return None if self.readable is None else sorted(self.readable)


EVERYTHING = Visibility(readable=None, writable=None)


async def visibility(session: AsyncSession, user: User) -> Visibility:
    """A member reads their own scope, their rooms' and global, and writes their own and their
    rooms'; staff reads and writes everything."""
    if user.role == "staff":
        return EVERYTHING
    rows = await session.execute(select(RoomMember.room_id).where(RoomMember.user_id == user.id))
    own = {user_key(user), *(room_key(room_id) for room_id in rows.scalars())}
    return Visibility(readable=frozenset({*own, GLOBAL}), writable=frozenset(own))


def describe(scope: str) -> tuple[str, str | None]:
    """("user", public id) | ("room", room id) | ("global", None) | ("unknown", scope)."""
    if scope == GLOBAL:
        return "global", None
    for prefix in (USER_PREFIX, ROOM_PREFIX):
        if scope.startswith(prefix):
            return prefix[:-1], scope[len(prefix) :]
    return "unknown", scope
