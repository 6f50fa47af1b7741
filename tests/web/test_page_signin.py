"""Sign in and out: nothing of the chat is shown or fetched before signing in."""

from __future__ import annotations

from playwright.sync_api import Request, expect

from tests.web.conftest import SIGNED_IN, SIGNIN_KEY, SIGNIN_SUBMIT, PageFactory


def test_nothing_before_sign_in_then_sign_in_and_out(new_page: PageFactory) -> None:
    page = new_page(sign_in=False)
    api_calls: list[str] = []

    def record(request: Request) -> None:
        if "/v1/" in request.url:
            api_calls.append(request.url)

    page.on("request", record)
    page.reload()
    expect(page.locator(SIGNIN_KEY)).to_be_visible()
    expect(page.locator("#shell")).to_be_hidden()
    expect(page.locator("[data-testid=composer]")).to_have_count(0)
    expect(page.locator(".room-list li")).to_have_count(0)
    assert api_calls == []

    page.fill(SIGNIN_KEY, new_page.eko.key)
    page.click(SIGNIN_SUBMIT)
    expect(page.locator(SIGNED_IN)).to_be_visible()
    assert page.evaluate("localStorage.getItem('eko.apiKey')") == new_page.eko.key
    # Kept across a reload.
    page.reload()
    expect(page.locator(SIGNED_IN)).to_be_visible()

    page.click("[data-testid=signout]")
    expect(page.locator(SIGNIN_KEY)).to_be_visible()
    expect(page.locator("#shell")).to_be_hidden()
    assert page.evaluate("localStorage.getItem('eko.apiKey')") is None


def test_a_wrong_key_is_refused(new_page: PageFactory) -> None:
    new_page.allow_console_errors(r"status of 401")
    page = new_page(sign_in=False)
    page.fill(SIGNIN_KEY, "eko_wrong")
    page.click(SIGNIN_SUBMIT)
    expect(page.locator("#signin-error")).to_have_text("This key was refused.")
    expect(page.locator(SIGNED_IN)).to_be_hidden()
