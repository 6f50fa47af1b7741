"""Who am I, and staff-side user management."""

from __future__ import annotations

from fastapi import APIRouter, status
from sqlalchemy import func, select

from eko.accounts.errors import AccountError
from eko.api.account_problems import as_problem
from eko.api.deps import AccountsDep, CurrentUser, SessionDep, SettingsDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.accounts import UserAdminUpdate
from eko.api.schemas.rooms import UserCreate, UserCreated, UserOut, UserUpdate
from eko.store import users as user_repo
from eko.store.models import User

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


@router.post(
    "/users", status_code=status.HTTP_201_CREATED, responses=problem_responses(403, 409, 422)
)
async def create_user(
    body: UserCreate,
    _staff: StaffUser,
    session: SessionDep,
    settings: SettingsDep,
    accounts: AccountsDep,
) -> UserCreated:
    """A new user: with a password (they sign in on the page), or with an API key (shown
    once)."""
    if body.password is not None:
        try:
            created = await accounts.create_with_password(
                name=body.display_name, password=body.password, role=body.role, is_pro=body.is_pro
            )
        except AccountError as error:
            raise as_problem(error) from error
        return UserCreated(user=UserOut.of(created), api_key=None)
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


@router.patch("/users/{user_id}", responses=problem_responses(403, 404, 409, 422))
async def update_user(
    user_id: str, body: UserAdminUpdate, _staff: StaffUser, session: SessionDep
) -> UserOut:
    """Staff change someone's role, plan (pro) or free-message limit. The last staff member
    stays staff."""
    user = await user_repo.get_by_public_id(session, public_id=user_id)
    if user is None:
        raise Problem(404, "user-not-found", "User not found", f"No user {user_id!r}.")
    if body.role == "member" and user.role == "staff":
        staff_count = await session.scalar(
            select(func.count()).select_from(User).where(User.role == "staff")
        )
        if (staff_count or 0) <= 1:
            raise Problem(
                409, "last-staff", "Last staff member", "Someone else must be staff first."
            )
    if body.role is not None:
        user.role = body.role
    if body.is_pro is not None:
        user.is_pro = body.is_pro
    if body.free_quota_limit is not None:
        user.free_quota_limit = body.free_quota_limit
    await session.flush()
    return UserOut.of(user)
