"""The page around the chat: phone width, languages, settings, the banner, answer markers, and
auto-scroll."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, ConsoleMessage, Page, Route, expect

from tests.web.conftest import (
    CHROMIUM,
    CHROMIUM_ARGS,
    SCREENSHOTS,
    SIGNIN_SUBMIT,
    TIMEOUT_MS,
    PageFactory,
    WebEko,
    sign_in_with_key,
)
from tests.web.test_chat_page import COMPOSER, new_conversation, send


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"))


def test_phone_width(new_page: PageFactory) -> None:
    page = new_page(viewport={"width": 390, "height": 844})
    toggle = page.get_by_role("button", name="Show conversations")
    expect(toggle).to_be_visible()
    expect(page.locator("#new-room")).not_to_be_in_viewport()
    toggle.click()
    expect(page.locator("#new-room")).to_be_in_viewport()
    assert no_horizontal_scroll(page)
    page.click("#new-room")  # opening a conversation folds the list away again
    expect(page.locator("#new-room")).not_to_be_in_viewport()
    send(page, "Un message assez long pour tester la largeur " + "très " * 40 + "longue")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    send(page, "markdown")
    expect(page.locator(".messages pre code")).to_be_visible()
    # The send button is hidden (the stop button takes its place) until the answer is done.
    expect(reply.last).to_have_attribute("data-state", "done")
    assert no_horizontal_scroll(page)
    for selector in ("[data-testid=signout]", COMPOSER, "button.send"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, selector


def test_french_labels_and_language_in_settings(new_page: PageFactory) -> None:
    page = new_page(locale="fr-FR", sign_in=False)
    expect(page.locator(SIGNIN_SUBMIT)).to_have_text("Se connecter")
    assert page.evaluate("document.documentElement.lang") == "fr"
    sign_in_with_key(page, new_page.eko.new_user_key("Zoé", is_pro=False))
    expect(page.locator("[data-testid=signout]")).to_have_text("Se déconnecter")
    new_conversation(page)
    expect(page.get_by_role("button", name="Envoyer le message")).to_be_visible()
    expect(page.locator(COMPOSER)).to_have_attribute(
        "placeholder", "Écrivez un message… (Entrée envoie, Maj+Entrée : nouvelle ligne)"
    )

    page.get_by_role("button", name="Réglages").click()
    expect(page.locator("#settings-plan")).to_have_text("Gratuit : 0 messages sur 8 utilisés")
    page.fill("#settings-name", "Zoé B.")
    page.select_option("#settings-language", "en")
    page.get_by_role("button", name="Enregistrer").click()
    expect(page.locator("#settings-status")).to_have_text("Saved.")
    page.get_by_role("button", name="Close settings").click()
    expect(page.locator("[data-testid=signout]")).to_have_text("Sign out")
    expect(page.get_by_role("button", name="Send message")).to_be_visible()
    expect(page.locator("#me-name")).to_have_text("Zoé B.")
    # Kept: after a reload, and on the server.
    page.reload()
    expect(page.locator("[data-testid=signout]")).to_have_text("Sign out")
    me = page.evaluate("fetch('/v1/me').then(r => r.json())")  # the session cookie
    assert me["display_name"] == "Zoé B." and me["settings"]["language"] == "en"


def test_pro_plan_in_settings(signed_in_page: Page) -> None:
    page = signed_in_page
    page.get_by_role("button", name="Settings").click()
    expect(page.locator("#settings-plan")).to_have_text("Pro: unlimited messages")


def test_banner_when_the_server_is_unreachable(new_page: PageFactory) -> None:
    new_page.allow_console_errors(r"net::ERR_FAILED")
    page = new_page()
    new_conversation(page)
    banner = page.locator("[data-testid=banner]")
    expect(banner).to_be_hidden()

    def refuse(route: Route) -> None:
        route.abort()

    page.route("**/health", refuse)
    page.route("**/v1/**", refuse)
    send(page, "Tu es là ?")
    expect(banner).to_have_text("The server cannot be reached. Retrying…")
    expect(page.locator(".messages [data-role=user]")).to_have_attribute("data-state", "failed")
    page.unroute("**/health")
    page.unroute("**/v1/**")
    expect(banner).to_be_hidden(timeout=8_000)  # the next /health poll answers


def test_fallback_answer_is_marked(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Le modèle casse")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply.locator(".badge-fallback")).to_have_text("fallback answer")
    expect(page.locator("[data-testid=banner]")).to_have_text(
        "The model failed: this answer is a fallback."
    )
    send(page, "Et maintenant ?")
    expect(page.locator(".messages [data-role=assistant]").nth(1)).to_have_attribute(
        "data-state", "done"
    )
    expect(page.locator("[data-testid=banner]")).to_be_hidden()


def test_auto_scroll_respects_a_user_who_scrolled_up(new_page: PageFactory) -> None:
    eko = new_page.eko
    headers = {"Authorization": f"Bearer {eko.key}"}
    room_id = httpx.post(f"{eko.url}/v1/rooms", json={}, headers=headers).json()["id"]
    for i in range(30):
        httpx.post(
            f"{eko.url}/v1/rooms/{room_id}/messages?respond=false",
            json={"content": f"ancien message {i}"},
            headers=headers,
        ).raise_for_status()
    page = new_page(viewport={"width": 900, "height": 600})
    page.goto(f"/#/chat/{room_id}")
    messages = page.locator("[data-testid=messages]")
    expect(messages.locator("[data-role=user]")).to_have_count(30)
    at_bottom = "el => el.scrollHeight - el.scrollTop - el.clientHeight < 50"
    page.wait_for_function(f"({at_bottom})(document.querySelector('.messages'))")

    send(page, "Parle lentement")
    reply = messages.locator("[data-role=assistant]")
    expect(reply).to_contain_text("lentement1")
    assert messages.evaluate(at_bottom)
    messages.evaluate("el => el.scrollTop = 0")
    pill = page.locator("[data-testid=new-messages]")
    expect(pill).to_be_visible()
    expect(reply).to_contain_text("lentement12")
    assert messages.evaluate("el => el.scrollTop") == 0  # not pulled down
    pill.click()
    expect(pill).to_be_hidden()
    assert messages.evaluate(at_bottom)
    expect(reply).to_have_attribute("data-state", "done", timeout=15_000)
    assert messages.evaluate(at_bottom)  # followed to the end once back at the bottom


def test_plain_http_on_a_lan_address(browser: Browser, live_eko: WebEko) -> None:
    """Not a secure context (no crypto.randomUUID, no clipboard API): sending still works."""
    port = live_eko.url.rsplit(":", 1)[1]
    lan = browser.browser_type.launch(
        executable_path=CHROMIUM,
        args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP eko-lan.test 127.0.0.1"],
    )
    errors: list[str] = []
    try:
        page = lan.new_page(base_url=f"http://eko-lan.test:{port}")
        page.set_default_timeout(TIMEOUT_MS)

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", console)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/")
        assert page.evaluate("[window.isSecureContext, typeof crypto.randomUUID]") == [
            False,
            "undefined",
        ]
        sign_in_with_key(page, live_eko.key)
        new_conversation(page)
        send(page, "Depuis le réseau local")
        reply = page.locator(".messages [data-role=assistant]")
        expect(reply.locator(".msg-body")).to_have_text("Vous avez dit : Depuis le réseau local")
        expect(reply).to_have_attribute("data-state", "done")
        reply.get_by_role("button", name="Copy message").click()
        expect(reply.locator("button.copy")).to_have_class("icon copy copied")
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "test_plain_http_on_a_lan_address.png"))
    finally:
        lan.close()
    assert errors == []
