"""What the page loads first (issue #37, page load): a signed-out visit fetches only what the
sign-in form needs; a signed-in one asks for its session and its room list once each (the
preloads are used, not fetched twice), shows the list, then loads the conversation modules and
opens the room; highlight.js comes only with a code block. Timings: tests/web/
measure_load.py."""

from __future__ import annotations

from playwright.sync_api import ConsoleMessage, Page, Request, Route, expect

from tests.web.conftest import SIGNED_IN, SIGNIN_NAME, PageFactory
from tests.web.test_chat_page import COMPOSER, new_conversation, send

# The conversation's modules and libraries: not needed before a room is shown.
CONVERSATION = ("chat.js", "messages.js", "markdown.js", "marked.esm.js", "purify.es.mjs")
HIGHLIGHT = ("highlight.min.js", "highlight-github-dark.min.css")


def record(page: Page) -> tuple[list[str], list[str]]:
    """Paths the page requests (from now on) and its console warnings."""
    paths: list[str] = []
    warnings: list[str] = []

    def on_request(request: Request) -> None:
        paths.append(request.url.split("//", 1)[1].split("/", 1)[1])

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "warning":
            warnings.append(message.text)

    page.on("request", on_request)
    page.on("console", on_console)
    return paths, warnings


def loaded(paths: list[str], names: tuple[str, ...]) -> list[str]:
    return [p for p in paths if p.rsplit("/", 1)[-1] in names]


def test_signed_out_the_page_loads_only_the_sign_in(new_page: PageFactory) -> None:
    page = new_page(sign_in=False)
    paths, warnings = record(page)
    page.reload()
    expect(page.locator(SIGNIN_NAME)).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert "static/signin.js" in paths
    assert paths.count("v1/auth/session") == 1  # the preload, used
    assert loaded(paths, CONVERSATION + HIGHLIGHT) == []
    assert [p for p in paths if p.startswith("v1/") and p != "v1/auth/session"] == []
    assert [w for w in warnings if "preload" in w] == []


def test_signed_in_the_list_then_the_conversation(new_page: PageFactory) -> None:
    page = new_page()
    new_conversation(page)  # the reload opens it again (its address)
    send(page, "Bonjour")
    reply = page.locator(".messages [data-role=assistant][data-state=done]")
    expect(reply).to_have_count(1, timeout=15_000)
    paths, warnings = record(page)
    page.reload()
    expect(page.locator(SIGNED_IN)).to_be_visible()
    expect(reply).to_have_count(1)
    expect(page.locator(".messages [data-role=user] .msg-body")).to_have_text("Bonjour")
    page.wait_for_load_state("networkidle")
    # Each asked once: the session and the list were preloaded and the page used the answers.
    assert paths.count("v1/auth/session") == 1
    assert paths.count("v1/rooms") == 1
    # The conversation's modules are asked for after the list (not preloaded with the page).
    assert loaded(paths, CONVERSATION)
    assert min(paths.index(p) for p in loaded(paths, CONVERSATION)) > paths.index("v1/rooms")
    assert loaded(paths, HIGHLIGHT) == []  # no code block in this room
    assert [w for w in warnings if "preload" in w] == []


def test_a_view_still_loading_never_replaces_a_newer_one(new_page: PageFactory) -> None:
    """The page opens a lobby whose module is slow to come; "New conversation" clicked
    meanwhile shows the conversation, and the lobby's module, once it arrives, leaves it there
    (it used to replace it: the composer was gone, the address said the new conversation)."""
    page = new_page()
    page.click("#new-lobby")
    expect(page.locator("[data-testid=lobby]")).to_be_visible()
    held: list[Route] = []
    page.route(
        "**/static/lobby.js", lambda route: held.append(route)
    )  # answered only when the test says so
    page.reload()  # opens the lobby again: its address
    for _ in range(200):  # bounded: until the page asks for the lobby's module
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page never asked for the lobby's module"
    new_conversation(page)
    for route in held:
        route.continue_()
    # The lobby's module has arrived and run: the older route had its chance to mount.
    page.evaluate(
        "() => import('/static/lobby.js').then(() => new Promise((r) => setTimeout(r, 300)))"
    )
    expect(page.locator(COMPOSER)).to_be_visible()
    expect(page.locator("[data-testid=lobby]")).to_have_count(0)


def test_a_view_still_mounting_never_resets_a_newer_one(new_page: PageFactory) -> None:
    """The page opens a lobby that is slow to load its room; "New conversation" clicked
    meanwhile shows the conversation, the person types, the lobby's room arrives: what was
    typed is still there and is sent (the older route used to show the newest view again from
    scratch, and the message was lost: CI's "regenerate twice" test sent nothing)."""
    page = new_page()
    with page.expect_response(
        lambda r: r.url.endswith("/v1/rooms") and r.request.method == "POST"
    ) as created:
        page.click("#new-lobby")
    lobby_id = str(created.value.json()["id"])
    expect(page.locator("[data-testid=lobby]")).to_be_visible()
    held: list[Route] = []
    page.route(f"**/v1/rooms/{lobby_id}", lambda route: held.append(route))
    page.reload()  # opens the lobby again, which now waits for its room
    for _ in range(200):  # bounded: until the lobby asks for its room
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the lobby never asked for its room"
    new_conversation(page)
    page.fill(COMPOSER, "Toujours là ?")
    for route in held:
        route.continue_()
    # The lobby's room has arrived and its mount has ended (the older route's last chance).
    page.wait_for_timeout(500)
    expect(page.locator(COMPOSER)).to_have_value("Toujours là ?")
    page.press(COMPOSER, "Enter")
    own = page.locator(".messages [data-role=user] .msg-body").first
    expect(own).to_have_text("Toujours là ?")
    expect(page.locator("[data-testid=lobby]")).to_have_count(0)
