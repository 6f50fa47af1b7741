"""Small builders shared by the lobby tests."""

from __future__ import annotations

from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Room, User


async def make_lobby(database: Database, *, members: int = 2) -> tuple[Room, list[User]]:
    async with database.session() as session:
        users = []
        for i in range(members):
            user, _key = await user_repo.create_user(session, display_name=f"user{i}")
            users.append(user)
        room = await room_repo.create_room(
            session, kind="lobby", name="lobby", persona="eko", created_by=users[0].id
        )
        for user in users[1:]:
            await room_repo.add_member(session, room_id=room.id, user_id=user.id)
        return room, users
