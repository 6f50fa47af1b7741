"""The page's accounts through the API, on both backends: the first run's operator, sign-in
with a session cookie, CSRF on the cookie's writes, the rate limit, expiry and sign-out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from argon2.exceptions import VerifyMismatchError
from sqlalchemy import update

from eko.accounts.passwords import Passwords
from eko.store.account_models import WebSession
from tests.api.accounts_helpers import PASSWORD, session_of, setup_operator, sign_in
from tests.api.conftest import HarnessFactory


async def test_first_run_creates_the_operator_once(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        state = (await h.client.get("/v1/auth/session")).json()
        assert state["signed_in"] is False and state["setup_needed"] is True
        # Bad input stores nothing: a short password is refused and the setup is still open.
        short = await h.client.post("/v1/auth/setup", json={"name": "Ops", "password": "short"})
        assert short.status_code == 422
        assert short.headers["content-type"].startswith("application/problem+json")
        assert (await h.client.get("/v1/auth/session")).json()["setup_needed"] is True

        response = await h.client.post("/v1/auth/setup", json={"name": "Ops", "password": PASSWORD})
        assert response.status_code == 201, response.text
        cookie = response.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        assert response.json()["user"]["role"] == "staff"
        assert response.json()["user"]["is_pro"] is True
        browser = session_of(response)
        h.client.cookies.clear()

        me = await h.client.get("/v1/me", headers=browser.reads)
        assert me.status_code == 200 and me.json()["display_name"] == "Ops"
        assert (await h.client.get("/v1/auth/session")).json() == {
            "signed_in": False,
            "setup_needed": False,
            "user": None,
            "csrf_token": None,
            "expires_at": None,
        }
        again = await h.client.post(
            "/v1/auth/setup", json={"name": "Intruder", "password": PASSWORD}
        )
        assert again.status_code == 409
        assert again.json()["type"].endswith("already-set-up")


async def test_sign_in_and_the_same_answer_for_unknown_name_and_wrong_password(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        await setup_operator(h.client, "Ops")
        wrong = await sign_in(h.client, "Ops", "not the password")
        unknown = await sign_in(h.client, "Nobody", "not the password")
        assert wrong.status_code == unknown.status_code == 401
        assert wrong.json() == unknown.json()
        assert "set-cookie" not in wrong.headers and "set-cookie" not in unknown.headers
        # The name is case-insensitive.
        ok = await sign_in(h.client, "ops")
        browser = session_of(ok)
        assert (await h.client.get("/v1/me", headers=browser.reads)).status_code == 200


async def test_an_unknown_name_is_checked_against_a_hash_too() -> None:
    class CountingHasher:
        def __init__(self) -> None:
            self.verified = 0

        def hash(self, password: str) -> str:
            return "$argon2id$dummy"

        def verify(self, stored: str, password: str) -> bool:
            self.verified += 1
            raise VerifyMismatchError

    hasher = CountingHasher()
    passwords = Passwords(hasher)  # type: ignore[arg-type]
    assert await passwords.verify(None, "x") is False
    assert await passwords.verify("$argon2id$stored", "x") is False
    assert hasher.verified == 2  # the unknown name paid for a verification like the wrong one


async def test_sign_in_is_rate_limited_per_name_and_per_address(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(signin_max_failures_per_name=3, signin_max_failures_per_address=5) as h:
        await setup_operator(h.client, "Ops")
        for _ in range(3):
            assert (await sign_in(h.client, "Ops", "wrong password")).status_code == 401
        limited = await sign_in(h.client, "Ops")  # even the right password, now
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) > 0
        assert limited.json()["type"].endswith("too-many-signin-attempts")
        # Other names from the same address: two more refusals reach the address's limit.
        for name in ("a", "b"):
            assert (await sign_in(h.client, name, "wrong password")).status_code == 401
        assert (await sign_in(h.client, "c", "wrong password")).status_code == 429


async def test_cookie_writes_need_the_csrf_token_and_keys_do_not(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        browser = await setup_operator(h.client)
        refused = await h.client.post("/v1/rooms", json={"kind": "direct"}, headers=browser.reads)
        assert refused.status_code == 403
        assert refused.json()["type"].endswith("csrf-refused")
        forged = await h.client.post(
            "/v1/rooms",
            json={"kind": "direct"},
            headers={**browser.reads, "X-CSRF-Token": "guess"},
        )
        assert forged.status_code == 403
        rooms = await h.client.get("/v1/rooms", headers=browser.reads)
        assert rooms.status_code == 200 and rooms.json() == []  # nothing was stored

        made = await h.client.post("/v1/rooms", json={"kind": "direct"}, headers=browser.writes)
        assert made.status_code == 201
        # A program's key: no CSRF token, no cookie.
        key = await h.client.post("/v1/me/keys", json={"name": "script"}, headers=browser.writes)
        assert key.status_code == 201
        program = {"Authorization": f"Bearer {key.json()['key']}"}
        assert (await h.client.post("/v1/rooms", json={}, headers=program)).status_code == 201


async def test_an_expired_session_and_a_signed_out_one_are_refused(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        first = await setup_operator(h.client)
        second = session_of(await sign_in(h.client, "Ops"))
        async with h.services.database.session() as session:
            await session.execute(
                update(WebSession)
                .where(WebSession.csrf_token == first.csrf)
                .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
            )
        expired = await h.client.get("/v1/me", headers=first.reads)
        assert expired.status_code == 401
        assert expired.json()["type"].endswith("session-expired")
        assert (await h.client.get("/v1/auth/session", headers=first.reads)).json()[
            "signed_in"
        ] is False

        state = await h.client.get("/v1/auth/session", headers=second.reads)
        assert state.json()["signed_in"] is True and state.json()["csrf_token"] == second.csrf
        # Signing out is a write: without the token it is refused and the session lives on.
        kept = await h.client.post("/v1/auth/signout", headers=second.reads)
        assert kept.status_code == 403
        assert (await h.client.get("/v1/me", headers=second.reads)).status_code == 200
        out = await h.client.post("/v1/auth/signout", headers=second.writes)
        assert out.status_code == 204
        assert 'eko_session=""' in out.headers["set-cookie"] or "max-age=0" in (
            out.headers["set-cookie"].lower()
        )
        assert (await h.client.get("/v1/me", headers=second.reads)).status_code == 401


async def test_a_key_opens_a_page_session_and_a_bad_key_does_not(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, program = await h.user("bob")
        response = await h.client.post("/v1/auth/key", headers=program)
        h.client.cookies.clear()
        browser = session_of(response)
        assert (await h.client.get("/v1/me", headers=browser.reads)).json()["display_name"] == "bob"
        refused = await h.client.post("/v1/auth/key", headers={"Authorization": "Bearer eko_no"})
        assert refused.status_code == 401 and "set-cookie" not in refused.headers
        assert (await h.client.post("/v1/auth/key")).status_code == 401
