"""API keys for programs: one's own (settings) and, for staff, anyone's (the users page)."""

from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy.ext.asyncio import AsyncSession

from eko.api.deps import CurrentUser, SessionDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.accounts import KeyCreate, KeyCreated, KeyOut
from eko.store import api_keys as key_repo
from eko.store import users as user_repo
from eko.store.models import User

router = APIRouter(prefix="/v1", tags=["accounts"])


async def _create(session: AsyncSession, user_id: int, name: str) -> KeyCreated:
    row, key = await key_repo.create_key(session, user_id=user_id, name=name.strip())
    return KeyCreated(**KeyOut.of(row).model_dump(), key=key)


async def _revoke(session: AsyncSession, user_id: int, key_id: str) -> None:
    if await key_repo.revoke_key(session, user_id=user_id, key_id=key_id) is None:
        raise Problem(404, "key-not-found", "Key not found", f"No key {key_id!r} for this user.")


async def _user(session: AsyncSession, public_id: str) -> User:
    user = await user_repo.get_by_public_id(session, public_id=public_id)
    if user is None:
        raise Problem(404, "user-not-found", "User not found", f"No user {public_id!r}.")
    return user


@router.get("/me/keys")
async def list_my_keys(user: CurrentUser, session: SessionDep) -> list[KeyOut]:
    """My keys, revoked ones included (with when), newest first; never the keys themselves."""
    return [KeyOut.of(row) for row in await key_repo.list_keys(session, user_id=user.id)]


@router.post("/me/keys", status_code=status.HTTP_201_CREATED, responses=problem_responses(422))
async def create_my_key(body: KeyCreate, user: CurrentUser, session: SessionDep) -> KeyCreated:
    """A new key for a program: shown once in this answer."""
    return await _create(session, user.id, body.name)


@router.delete(
    "/me/keys/{key_id}", status_code=status.HTTP_204_NO_CONTENT, responses=problem_responses(404)
)
async def revoke_my_key(key_id: str, user: CurrentUser, session: SessionDep) -> None:
    """Revoke one of my keys: from now on it gets 401."""
    await _revoke(session, user.id, key_id)


@router.get("/users/{user_id}/keys", responses=problem_responses(403, 404))
async def list_user_keys(user_id: str, _staff: StaffUser, session: SessionDep) -> list[KeyOut]:
    user = await _user(session, user_id)
    return [KeyOut.of(row) for row in await key_repo.list_keys(session, user_id=user.id)]


@router.post(
    "/users/{user_id}/keys",
    status_code=status.HTTP_201_CREATED,
    responses=problem_responses(403, 404, 422),
)
async def create_user_key(
    user_id: str, body: KeyCreate, _staff: StaffUser, session: SessionDep
) -> KeyCreated:
    user = await _user(session, user_id)
    return await _create(session, user.id, body.name)


@router.delete(
    "/users/{user_id}/keys/{key_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(403, 404),
)
async def revoke_user_key(
    user_id: str, key_id: str, _staff: StaffUser, session: SessionDep
) -> None:
    user = await _user(session, user_id)
    await _revoke(session, user.id, key_id)
