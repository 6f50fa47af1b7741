"""Who may see an event: the members of its room (staff: every room, as elsewhere in the
API); an event with no room only staff. Membership is cached per connection for a short
while, so a busy room costs one query per connection, not one per event."""

from __future__ import annotations

import time

from eko.events.types import Event
from eko.store import rooms as room_repo
from eko.store.db import Database
from eko.store.models import User


class EventAccess:
    def __init__(self, database: Database, user: User, *, cache_s: float = 30.0) -> None:
        self._database = database
        self._user_id = user.id
        self._staff = user.role == "staff"
        self._cache_s = cache_s
        self._rooms: dict[str, tuple[bool, float]] = {}

    async def may_see(self, event: Event) -> bool:
        if self._staff:
            return True
        if event.room_id is None:
            return False
        cached = self._rooms.get(event.room_id)
        now = time.monotonic()
        if cached is not None and now - cached[1] < self._cache_s:
            return cached[0]
        async with self._database.session() as session:
            member = await room_repo.is_member(
                session, room_id=event.room_id, user_id=self._user_id
            )
        self._rooms[event.room_id] = (member, now)
        return member
