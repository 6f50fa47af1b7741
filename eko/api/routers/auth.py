"""The page's sign-in: the first run's operator, name + password, an HttpOnly session cookie,
sign-out. Programs keep using API keys (`Authorization: Bearer`)."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request, Response, status

from eko.accounts.errors import AccountError
from eko.accounts.service import SignedIn
from eko.api.account_problems import as_problem
from eko.api.deps import CSRF_HEADER, SESSION_COOKIE, AccountsDep, CurrentUser
from eko.api.problems import Problem, problem_responses
from eko.api.schemas.accounts import Credentials, SessionOut, SessionState
from eko.api.schemas.rooms import UserOut

router = APIRouter(prefix="/v1/auth", tags=["accounts"])


def set_session_cookie(response: Response, request: Request, signed_in: SignedIn) -> SessionOut:
    """Set the cookie (HttpOnly, SameSite=Lax, Secure over https) and describe the session."""
    response.set_cookie(
        SESSION_COOKIE,
        signed_in.token,
        expires=signed_in.expires_at,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    response.headers["Cache-Control"] = "no-store"
    return SessionOut(
        user=UserOut.of(signed_in.user),
        csrf_token=signed_in.csrf_token,
        expires_at=signed_in.expires_at,
    )


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


@router.post("/setup", status_code=status.HTTP_201_CREATED, responses=problem_responses(409, 422))
async def create_operator(
    body: Credentials, request: Request, response: Response, accounts: AccountsDep
) -> SessionOut:
    """A fresh install's first account: the operator (staff, pro), signed in at once. Refused
    once the server has any user."""
    try:
        signed_in = await accounts.create_operator(name=body.name, password=body.password)
    except AccountError as error:
        raise as_problem(error) from error
    return set_session_cookie(response, request, signed_in)


@router.post("/signin", responses=problem_responses(401, 422, 429))
async def sign_in(
    body: Credentials, request: Request, response: Response, accounts: AccountsDep
) -> SessionOut:
    """Name + password -> the session cookie. An unknown name and a wrong password get the
    same answer; too many refusals for a name or from an address -> 429."""
    try:
        signed_in = await accounts.sign_in(
            name=body.name, password=body.password, address=client_address(request)
        )
    except AccountError as error:
        raise as_problem(error) from error
    return set_session_cookie(response, request, signed_in)


@router.get("/session")
async def current_session(
    request: Request, response: Response, accounts: AccountsDep
) -> SessionState:
    """Who this browser is signed in as (its cookie is unreadable by scripts) with the CSRF
    token its writes send; when nobody is, whether the server still needs its operator."""
    response.headers["Cache-Control"] = "no-store"
    token = request.cookies.get(SESSION_COOKIE)
    found = await accounts.session_user(token) if token else None
    if found is None:
        return SessionState(signed_in=False, setup_needed=await accounts.needs_setup())
    web_session, user = found
    return SessionState(
        signed_in=True,
        setup_needed=False,
        user=UserOut.of(user),
        csrf_token=web_session.csrf_token,
        expires_at=web_session.expires_at,
    )


@router.post("/key", responses=problem_responses(401))
async def sign_in_with_key(
    user: CurrentUser, request: Request, response: Response, accounts: AccountsDep
) -> SessionOut:
    """A session cookie for the holder of an API key (`Authorization: Bearer`): the page's
    "use an API key" sign-in; the page keeps the cookie, never the key."""
    if request.headers.get("authorization") is None:
        raise Problem(401, "missing-api-key", "Missing API key", "Send `Authorization: Bearer`.")
    return set_session_cookie(response, request, await accounts.open_session(user))


@router.post("/signout", status_code=status.HTTP_204_NO_CONTENT, responses=problem_responses(403))
async def sign_out(request: Request, response: Response, accounts: AccountsDep) -> None:
    """End this browser's session (revoked server-side) and clear its cookie."""
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        found = await accounts.session_user(token)
        if found is not None:
            sent = request.headers.get(CSRF_HEADER, "")
            if not sent or not hmac.compare_digest(sent, found[0].csrf_token):
                raise Problem(403, "csrf-refused", "Missing or wrong CSRF token")
            await accounts.sign_out(token)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
