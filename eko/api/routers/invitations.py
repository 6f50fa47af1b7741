"""Staff invite people with a one-time link; the invitee picks a name and a password."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from eko.accounts.errors import AccountError
from eko.api.account_problems import as_problem
from eko.api.deps import AccountsDep, SessionDep, StaffUser
from eko.api.problems import Problem, problem_responses
from eko.api.routers.auth import set_session_cookie
from eko.api.schemas.accounts import (
    Credentials,
    InvitationCreate,
    InvitationCreated,
    InvitationOut,
    SessionOut,
)
from eko.store import invitations as invitation_repo

router = APIRouter(prefix="/v1", tags=["accounts"])

_UNUSABLE = Problem(
    410, "invitation-unusable", "Invitation used or expired", "Ask for a new invitation link."
)


@router.post("/invitations", status_code=status.HTTP_201_CREATED, responses=problem_responses(403))
async def create_invitation(
    body: InvitationCreate, staff: StaffUser, request: Request, accounts: AccountsDep
) -> InvitationCreated:
    """A one-time link (expires after EKO_INVITATION_TTL_H hours): the token is shown once."""
    token, row = await accounts.invite(staff=staff, role=body.role, is_pro=body.is_pro)
    link = f"{str(request.base_url).rstrip('/')}/#/invite/{token}"
    return InvitationCreated(**InvitationOut.of(row).model_dump(), token=token, link=link)


@router.get("/invitations", responses=problem_responses(403))
async def list_invitations(_staff: StaffUser, session: SessionDep) -> list[InvitationOut]:
    """Open invitations (neither used nor expired), newest first."""
    return [InvitationOut.of(row) for row in await invitation_repo.list_open(session)]


@router.delete(
    "/invitations/{invitation_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=problem_responses(403, 404),
)
async def cancel_invitation(invitation_id: str, _staff: StaffUser, session: SessionDep) -> None:
    if not await invitation_repo.cancel(session, public_id=invitation_id):
        raise Problem(404, "invitation-not-found", "No open invitation with this id")


@router.get("/invite/{token}", responses=problem_responses(410))
async def read_invitation(token: str, accounts: AccountsDep) -> InvitationOut:
    """What an invitation link offers, while it can be used."""
    row = await accounts.open_invitation(token)
    if row is None:
        raise _UNUSABLE
    return InvitationOut.of(row)


@router.post(
    "/invite/{token}",
    status_code=status.HTTP_201_CREATED,
    responses=problem_responses(409, 410, 422),
)
async def accept_invitation(
    token: str, body: Credentials, request: Request, response: Response, accounts: AccountsDep
) -> SessionOut:
    """Accept: a new account with this name and password, signed in. Works once."""
    try:
        signed_in = await accounts.accept(token=token, name=body.name, password=body.password)
    except AccountError as error:
        raise as_problem(error) from error
    return set_session_cookie(response, request, signed_in)
