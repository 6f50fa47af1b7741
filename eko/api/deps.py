"""FastAPI dependencies as Annotated aliases: services come from app.state, never from globals."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from eko.accounts.service import Accounts
from eko.api.problems import Problem
from eko.chat.service import ChatService
from eko.config import Settings
from eko.prompts.library import PromptLibrary
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.db import Database
from eko.store.models import Room, User
from eko.wiring import Services

_bearer = HTTPBearer(auto_error=False)

# The accessors below are `async def` although they never wait: FastAPI runs a plain `def`
# dependency in its thread pool, and a message's route resolved ~16 of them — a thread hop
# each, which a busy 2-core machine turned into a good part of a cached answer's time.


async def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


async def get_settings(services: ServicesDep) -> Settings:
    return services.settings


async def get_database(services: ServicesDep) -> Database:
    return services.database


async def get_chat(services: ServicesDep) -> ChatService:
    return services.chat


async def get_prompts(services: ServicesDep) -> PromptLibrary:
    return services.prompts


async def get_accounts(services: ServicesDep) -> Accounts:
    return services.accounts


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
ChatDep = Annotated[ChatService, Depends(get_chat)]
PromptsDep = Annotated[PromptLibrary, Depends(get_prompts)]
AccountsDep = Annotated[Accounts, Depends(get_accounts)]


async def get_session(database: DatabaseDep) -> AsyncIterator[AsyncSession]:
    """A request-scoped session, for routes that only read and write the database. A route
    that waits on a model or the network opens short sessions of its own instead."""
    async with database.session() as session:
        yield session


# scope="function": the transaction commits before the response is sent, so a 201 means the
# row is stored and the client's next request sees it (the default "request" scope would
# commit after the response, and a failed commit would follow an acknowledged write).
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]

_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
# The page's session cookie (eko/api/routers/auth.py sets it) and the header its writes carry.
SESSION_COOKIE = "eko_session"
CSRF_HEADER = "X-CSRF-Token"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def current_user(
    request: Request,
    database: DatabaseDep,
    accounts: AccountsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    """The caller: an API key (`Authorization: Bearer`, for programs, never CSRF-checked) or
    the page's session cookie, whose writes must carry the session's CSRF token."""
    if credentials is None and request.headers.get("authorization") is None:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            return await _cookie_user(request, accounts, token)
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise Problem(
            401,
            "missing-api-key",
            "Missing API key",
            "Sign in, or send `Authorization: Bearer <key>` (keys: the page's settings, "
            "POST /v1/me/keys, `eko users create NAME`).",
            headers=_UNAUTHORIZED,
        )
    # Its own short transaction: the connection goes back to the pool before the route runs,
    # so a request that waits on a model holds no connection.
    async with database.session() as session:
        user = await user_repo.get_by_api_key(session, api_key=credentials.credentials)
    if user is None:
        raise Problem(401, "invalid-api-key", "Invalid API key", headers=_UNAUTHORIZED)
    return user


async def _cookie_user(request: Request, accounts: Accounts, token: str) -> User:
    found = await accounts.session_user(token)
    if found is None:
        raise Problem(
            401, "session-expired", "Session expired", "Sign in again.", headers=_UNAUTHORIZED
        )
    web_session, user = found
    if request.method not in _SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not sent or not hmac.compare_digest(sent, web_session.csrf_token):
            raise Problem(
                403,
                "csrf-refused",
                "Missing or wrong CSRF token",
                f"A write signed in by cookie sends the session's token in {CSRF_HEADER}.",
            )
    return user


CurrentUser = Annotated[User, Depends(current_user)]


async def staff_user(user: CurrentUser) -> User:
    if user.role != "staff":
        raise Problem(403, "staff-only", "Staff only", "This route needs the staff role.")
    return user


StaffUser = Annotated[User, Depends(staff_user)]


async def room_for_user(session: AsyncSession, *, room_id: str, user: User) -> Room:
    """The room, if it exists and the user may see it. Another user's room is reported as not
    found, so room ids cannot be probed."""
    room = await room_repo.get_room(session, room_id=room_id)
    if room is not None and (
        user.role == "staff" or await room_repo.is_member(session, room_id=room.id, user_id=user.id)
    ):
        return room
    raise Problem(404, "room-not-found", "Room not found", f"No room {room_id!r} for this user.")
