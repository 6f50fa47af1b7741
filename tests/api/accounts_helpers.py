"""Helpers of the accounts tests: sign in through the API, read the session cookie."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from eko.api.deps import SESSION_COOKIE

PASSWORD = "correct horse battery"


@dataclass(frozen=True)
class Browser:
    """A signed-in page's credentials: the cookie's token and the CSRF token."""

    token: str
    csrf: str

    @property
    def reads(self) -> dict[str, str]:
        """Headers of a read: the cookie only."""
        return {"Cookie": f"{SESSION_COOKIE}={self.token}"}

    @property
    def writes(self) -> dict[str, str]:
        """Headers of a write from the page: the cookie and the CSRF token."""
        return {**self.reads, "X-CSRF-Token": self.csrf}


def session_of(response: httpx.Response) -> Browser:
    assert response.status_code in (200, 201), response.text
    token = response.cookies.get(SESSION_COOKIE)
    assert token, response.headers.get("set-cookie")
    return Browser(token, response.json()["csrf_token"])


async def setup_operator(client: httpx.AsyncClient, name: str = "Ops") -> Browser:
    response = await client.post("/v1/auth/setup", json={"name": name, "password": PASSWORD})
    client.cookies.clear()  # each request below says which cookie it sends
    return session_of(response)


async def sign_in(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> httpx.Response:
    response = await client.post("/v1/auth/signin", json={"name": name, "password": password})
    client.cookies.clear()
    return response
