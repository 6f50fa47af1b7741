"""Who am I, and staff-side user management."""

from __future__ import annotations

from fastapi import APIRouter, status

from eko.api.deps import CurrentUser, SessionDep, SettingsDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.rooms import UserCreate, UserCreated, UserOut, UserUpdate
from eko.store import users as user_repo

router = APIRouter(prefix="/v1", tags=["users"])


@router.get("/me")
async def me(user: CurrentUser) -> UserOut:
    return UserOut.of(user)


@router.patch("/me", responses=problem_responses(422))
async def update_me(body: UserUpdate, user: CurrentUser, session: SessionDep) -> UserOut:
    """Change one's display name and/or language (fr, en; kept in `settings.language`)."""
    name = body.display_name.strip() if body.display_name is not None else None
    if name == "":
        raise Problem(422, "empty-name", "Empty name", "A display name cannot be blank.")
    updated = await user_repo.update_user(
        session, user_id=user.id, display_name=name, language=body.language
    )
    if updated is None:  # deleted between authentication and now
        raise Problem(401, "invalid-api-key", "Invalid API key")
    return UserOut.of(updated)


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
