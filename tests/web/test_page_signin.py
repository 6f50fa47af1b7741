"""Sign in and out with an API key (the form's "use an API key"): nothing of the chat is shown
or fetched before signing in, and the page keeps a session cookie, never the key. Names and
passwords: tests/web/test_accounts_page.py."""

from __future__ import annotations

from playwright.sync_api import Request, expect

from tests.web.conftest import SIGNED_IN, SIGNIN_NAME, PageFactory, sign_in_with_key


def test_nothing_before_sign_in_then_sign_in_and_out(new_page: PageFactory) -> None:
    page = new_page(sign_in=False)
    api_calls: list[str] = []

    def record(request: Request) -> None:
        if "/v1/" in request.url:
            api_calls.append(request.url.split("/v1/", 1)[1])

    page.on("request", record)
    page.reload()
    expect(page.locator(SIGNIN_NAME)).to_be_visible()
    expect(page.locator("#shell")).to_be_hidden()
    expect(page.locator("[data-testid=composer]")).to_have_count(0)
    expect(page.locator(".room-list li")).to_have_count(0)
    assert api_calls == ["auth/session"]  # who is signed in: nobody

    sign_in_with_key(page, new_page.eko.key)
    expect(page.locator(SIGNED_IN)).to_be_visible()
    storage = page.evaluate("JSON.stringify({...localStorage, ...sessionStorage})")
    assert new_page.eko.key not in storage
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "eko_session"]
    assert cookie["httpOnly"] is True
    # Kept across a reload.
    page.reload()
    expect(page.locator(SIGNED_IN)).to_be_visible()

    page.click("[data-testid=signout]")
    expect(page.locator(SIGNIN_NAME)).to_be_visible()
    expect(page.locator("#shell")).to_be_hidden()
    assert [c for c in page.context.cookies() if c["name"] == "eko_session"] == []


def test_a_wrong_key_is_refused(new_page: PageFactory) -> None:
    new_page.allow_console_errors(r"status of 401")
    page = new_page(sign_in=False)
    sign_in_with_key(page, "eko_wrong")
    expect(page.locator("#signin-error")).to_have_text("This key was refused.")
    expect(page.locator(SIGNED_IN)).to_be_hidden()
