"""Who am I, and staff-side user management."""

from __future__ import annotations

from fastapi import APIRouter, status

from eko.api.deps import CurrentUser, SessionDep, SettingsDep, StaffUser
from eko.api.problems import problem_responses
from eko.api.schemas import UserCreate, UserCreated, UserOut
from eko.store import users as user_repo

router = APIRouter(prefix="/v1", tags=["users"])


@router.get("/me")
async def me(user: CurrentUser) -> UserOut:
    return UserOut.of(user)


@router.post("/users", status_code=status.HTTP_201_CREATED, responses=problem_responses(403))
async def create_user(
    body: UserCreate, _staff: StaffUser, session: SessionDep, settings: SettingsDep
) -> UserCreated:
    user, api_key = await user_repo.create_user(
        session,
        display_name=body.display_name,
        role=body.role,
        is_pro=body.is_pro,
        free_quota_limit=settings.default_free_quota_limit,
    )
    return UserCreated(user=UserOut.of(user), api_key=api_key)


@router.get("/users", responses=problem_responses(403))
async def list_users(_staff: StaffUser, session: SessionDep) -> list[UserOut]:
    return [UserOut.of(u) for u in await user_repo.list_users(session)]
