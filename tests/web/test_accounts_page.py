"""Accounts in the page (issue #37), on a fresh install of a real server: the operator created
in the browser, sign-in and sign-out with the HttpOnly cookie, a wrong password, an invitation
accepted by a second person who then joins a lobby added by name, API keys created and revoked
in the settings (a revoked key gets 401), and the users page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.conftest import (
    SIGNED_IN,
    SIGNIN_NAME,
    PageFactory,
    WebEko,
    sign_in_with_password,
)
from tests.web.scripted_model import web_model

PASSWORD = "un mot de passe sûr"
TITLE = "[data-testid=signin-title]"


@pytest.fixture
def fresh(
    browser: Browser, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[PageFactory]:
    """Pages on a server of its own with no user yet (a fresh install)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}"
    run_isolated(_migrate(url))
    with running_eko(url, [web_model()], with_users=False, assistant_name="Eko") as eko:
        factory = PageFactory(browser, WebEko(eko.url, "", ""))
        yield factory
        factory.finish(request.node.name)
        errors = factory.unexpected_errors()
        if errors:
            pytest.fail("errors in the browser:\n" + "\n".join(errors))


def create_operator(pages: PageFactory, name: str = "Camille") -> Page:
    page = pages(sign_in=False)
    expect(page.locator(TITLE)).to_have_text("Create the operator account")
    sign_in_with_password(page, name, PASSWORD)
    expect(page.locator(SIGNED_IN)).to_be_visible()
    return page


def me_with_key(url: str, key: str) -> int:
    return httpx.get(f"{url}/v1/me", headers={"Authorization": f"Bearer {key}"}).status_code


def test_first_run_operator_then_sign_out_a_wrong_password_and_sign_in(
    fresh: PageFactory,
) -> None:
    fresh.allow_console_errors(r"status of 401")  # the wrong password's answer
    page = create_operator(fresh)
    expect(page.locator("#me-name")).to_have_text("Camille")
    expect(page.locator("[data-testid=nav-users]")).to_be_visible()  # the operator is staff
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "eko_session"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Lax"
    assert page.evaluate("document.cookie") == ""  # unreadable by scripts
    assert page.evaluate("Object.keys(localStorage)") == ["eko.lang"] or page.evaluate(
        "Object.keys(localStorage).every(k => !k.includes('key'))"
    )
    page.reload()  # kept across a reload
    expect(page.locator(SIGNED_IN)).to_be_visible()

    page.click("[data-testid=signout]")
    expect(page.locator(TITLE)).to_have_text("Sign in")
    expect(page.locator("#shell")).to_be_hidden()
    # Revoked on the server: the old cookie no longer works.
    old = httpx.get(f"{fresh.eko.url}/v1/me", cookies={"eko_session": cookie["value"]})
    assert old.status_code == 401

    sign_in_with_password(page, "Camille", "pas le bon")
    expect(page.locator("[data-testid=signin-error]")).to_have_text("Wrong name or password.")
    expect(page.locator(SIGNED_IN)).to_be_hidden()
    sign_in_with_password(page, "camille", PASSWORD)  # the name's case does not matter
    expect(page.locator(SIGNED_IN)).to_be_visible()
    expect(page.locator("#me-name")).to_have_text("Camille")


def test_an_invitation_accepted_then_a_lobby_joined_by_name(fresh: PageFactory) -> None:
    fresh.allow_console_errors(r"status of 410")  # the used link, opened again
    camille = create_operator(fresh)
    camille.goto("/#/staff/users")
    camille.click("[data-testid=invite-create]")
    link = camille.locator("[data-testid=invite-link]")
    expect(link).to_have_value(re.compile(r"/#/invite/[\w-]+$"))
    invitation = link.input_value()

    # The link pasted into a tab already showing the sign-in form (only the hash changes).
    bruno = fresh(sign_in=False)
    expect(bruno.locator(TITLE)).to_have_text("Sign in")
    bruno.goto(invitation)
    expect(bruno.locator(TITLE)).to_have_text("Join Eko")
    sign_in_with_password(bruno, "Bruno", PASSWORD)
    expect(bruno.locator(SIGNED_IN)).to_be_visible()
    expect(bruno.locator("#me-name")).to_have_text("Bruno")
    assert "#/invite/" not in bruno.url
    expect(bruno.locator("[data-testid=nav-users]")).to_be_hidden()  # a member

    # The link works once.
    again = fresh(sign_in=False)
    expect(again.locator(TITLE)).to_have_text("Sign in")
    again.goto(invitation)
    expect(again.locator("[data-testid=signin-error]")).to_have_text(
        "This invitation link was already used or has expired: ask for a new one."
    )
    expect(again.locator(TITLE)).to_have_text("Sign in")

    camille.goto("/")
    camille.click("#new-lobby")
    lobby = camille.locator("[data-testid=lobby][data-ready=true]")
    expect(lobby).to_have_count(1)
    room_id = lobby.get_attribute("data-room-id")
    camille.locator("[data-testid=lobby-add-member]").press_sequentially("Bru")
    expect(camille.locator("[data-testid=lobby-member-suggestions] option")).to_have_attribute(
        "value", "Bruno"
    )
    camille.fill("[data-testid=lobby-add-member]", "Bruno")
    camille.click("[data-testid=lobby-add-member-submit]")
    expect(camille.locator("[data-testid=lobby-members]")).to_have_text("2 members")

    bruno.reload()
    entry = bruno.locator(f"[data-testid=room-list] [data-room-id='{room_id}']")
    expect(entry).to_have_count(1)
    bruno.goto(f"/#/lobby/{room_id}")
    expect(bruno.locator("[data-testid=lobby][data-ready=true]")).to_have_count(1)
    bruno.fill("[data-testid=lobby-input]", "Bonjour Camille, me voilà.")
    bruno.keyboard.press("Enter")
    said = camille.locator("[data-testid=lobby-messages]", has_text="Bonjour Camille, me voilà.")
    expect(said).to_have_count(1)


def test_keys_created_and_revoked_in_settings_and_the_users_page(fresh: PageFactory) -> None:
    page = create_operator(fresh)
    page.get_by_role("button", name="Settings").click()
    keys = page.locator("[data-testid=settings-keys]")
    expect(keys.locator("[data-testid=keys-list]")).to_have_text("No key yet.")
    keys.locator("[data-testid=key-name]").fill("script")
    keys.locator("[data-testid=key-create]").click()
    shown = keys.locator("[data-testid=key-new]")
    expect(shown).to_have_text(re.compile(r"^eko_"))
    key = shown.inner_text()
    assert me_with_key(fresh.eko.url, key) == 200
    row = keys.locator("[data-testid=keys-list] li", has_text="script")
    expect(row).to_have_count(1)
    row.locator("[data-testid=key-revoke]").click()
    expect(row).to_have_class(re.compile(r"\brevoked\b"))
    assert me_with_key(fresh.eko.url, key) == 401
    page.get_by_role("button", name="Close settings").click()

    # Staff create someone with a first password, make them pro, give them a key.
    page.goto("/#/staff/users")
    page.fill("[data-testid=create-name]", "Zoé")
    page.fill("[data-testid=create-password]", PASSWORD)
    page.click("[data-testid=create-submit]")
    zoe = page.locator("[data-testid=users-table] tr[data-user='Zoé']")
    expect(zoe).to_have_count(1)
    zoe.locator("[data-testid=user-pro]").check()
    expect(page.locator(".users-page [role=status]").last).to_have_text("Saved.")
    zoe.locator("[data-testid=user-keys]").click()
    zoe.locator("[data-testid=key-create]").click()
    zoe_key = zoe.locator("[data-testid=key-new]").inner_text()
    me = httpx.get(f"{fresh.eko.url}/v1/me", headers={"Authorization": f"Bearer {zoe_key}"})
    assert me.json()["display_name"] == "Zoé" and me.json()["is_pro"] is True

    other = fresh(sign_in=False)  # Zoé signs in with the password she was given
    sign_in_with_password(other, "Zoé", PASSWORD)
    expect(other.locator(SIGNED_IN)).to_be_visible()
    expect(other.locator(SIGNIN_NAME)).to_be_hidden()
