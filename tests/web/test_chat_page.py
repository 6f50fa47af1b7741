"""Everyday chat in the browser: send, stream, stop, regenerate, switch rooms, markdown, copy."""

from __future__ import annotations

from playwright.sync_api import Dialog, Page, expect

from tests.web.conftest import PageFactory

COMPOSER = "[data-testid=composer]"


def new_conversation(page: Page) -> str:
    """Starts a conversation from the button; returns its room id once its view is shown."""
    with page.expect_response(
        lambda r: r.url.endswith("/v1/rooms") and r.request.method == "POST"
    ) as created:
        page.click("#new-room")
    room_id = str(created.value.json()["id"])
    page.wait_for_function("(id) => location.hash === '#/chat/' + id", arg=room_id)
    expect(page.locator(COMPOSER)).to_be_visible()
    return room_id


def send(page: Page, text: str) -> None:
    page.fill(COMPOSER, text)
    page.press(COMPOSER, "Enter")


def messages(page: Page, role: str) -> list[str]:
    return page.locator(f".messages [data-role={role}] .msg-body").all_inner_texts()


def test_enter_sends_own_message_at_once_and_the_reply_streams(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Parle lentement")
    own = page.locator(".messages [data-role=user]").first
    expect(own.locator(".msg-body")).to_have_text("Parle lentement")
    expect(page.locator(COMPOSER)).to_have_value("")
    reply = page.locator(".messages [data-role=assistant]").first
    # Partial text while the reply is still being written.
    expect(reply).to_have_attribute("data-state", "streaming")
    expect(reply).to_contain_text("lentement2")
    assert reply.get_attribute("data-state") == "streaming"
    expect(reply).to_have_attribute("data-state", "done", timeout=15_000)
    expect(reply).to_contain_text("lentement39")
    # Reconciled with the stored messages: real ids, not the optimistic ones.
    assert not (own.get_attribute("data-message-id") or "").startswith("local-")
    assert not (reply.get_attribute("data-message-id") or "").startswith("reply-")


def test_shift_enter_adds_a_new_line(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    page.fill(COMPOSER, "ligne un")
    page.press(COMPOSER, "Shift+Enter")
    page.type(COMPOSER, "ligne deux")
    expect(page.locator(COMPOSER)).to_have_value("ligne un\nligne deux")
    expect(page.locator(".messages [data-role=user]")).to_have_count(0)
    page.press(COMPOSER, "Enter")
    expect(page.locator(".messages [data-role=user] .msg-body")).to_have_text(
        "ligne un\nligne deux"
    )
    expect(page.locator(".messages [data-role=assistant]")).to_have_attribute("data-state", "done")


def test_stop_keeps_what_was_written(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Écris lentement")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_contain_text("lentement3")
    page.get_by_role("button", name="Stop the reply").click()
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply.locator(".badge-stopped")).to_have_text("stopped")
    assert "lentement39" not in reply.inner_text()
    expect(page.get_by_role("button", name="Stop the reply")).to_be_hidden()
    expect(page.get_by_role("button", name="Send message")).to_be_visible()


def test_regenerate_shows_a_new_version(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Donne une version")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    first = reply.locator(".msg-body").inner_text()
    assert first.startswith("Version ")
    reply_id = reply.get_attribute("data-message-id")
    reply.get_by_role("button", name="Regenerate the reply").click()
    expect(reply.locator(".badge-version")).to_have_text("Version 2")
    second = reply.locator(".msg-body").inner_text()
    assert second.startswith("Version ") and second != first
    # The same message, in place: still one reply, with the same id.
    expect(page.locator(".messages [data-role=assistant]")).to_have_count(1)
    assert reply.get_attribute("data-message-id") == reply_id


def test_a_reply_lands_in_its_own_conversation_after_a_switch(signed_in_page: Page) -> None:
    page = signed_in_page
    first = new_conversation(page)
    send(page, "Réponds lentement")
    expect(page.locator(".messages [data-role=assistant]")).to_contain_text("lentement1")
    second = new_conversation(page)
    assert second != first
    expect(page.locator(".messages [data-role=user]")).to_have_count(0)
    send(page, "Bonjour")
    expect(page.locator(".messages [data-role=assistant] .msg-body")).to_have_text(
        "Vous avez dit : Bonjour"
    )
    assert "lentement" not in page.locator(".messages").inner_text()
    page.click(f".room-list [data-room-id='{first}'] a")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_contain_text("lentement39", timeout=15_000)
    expect(reply).to_have_attribute("data-state", "done")
    expect(page.locator(".messages [data-role=user] .msg-body")).to_have_text("Réponds lentement")
    # The first conversation got its title from its first message.
    expect(page.locator(f".room-list [data-room-id='{first}'] a")).to_have_text("Réponds lentement")


def test_markdown_is_rendered_and_html_is_inert(signed_in_page: Page) -> None:
    page = signed_in_page
    dialogs: list[str] = []

    def record(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    new_conversation(page)
    send(page, "Du markdown stp")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply.locator("pre code")).to_have_text("print('<b>bonjour</b>')")
    expect(reply.locator("h2")).to_have_text("Titre")
    expect(reply.locator("li")).to_have_count(2)
    expect(reply.locator("strong")).to_have_text("gras")

    payload = (
        '<img src=x onerror="window.__xss=1;alert(1)"><script>window.__xss=2</script>'
        "[clic](javascript:window.__xss=3) **fin**"
    )
    send(page, payload)
    replies = page.locator(".messages [data-role=assistant]")
    expect(replies.nth(1)).to_have_attribute("data-state", "done")
    expect(replies.nth(1)).to_contain_text("<img src=x onerror=")
    expect(page.locator(".messages [data-role=user] .msg-body").nth(1)).to_have_text(payload)
    assert page.locator(".messages img, .messages script").count() == 0
    link = replies.nth(1).locator("a", has_text="clic")
    expect(link).to_have_count(1)
    assert link.get_attribute("href") is None  # the javascript: URL was dropped
    link.click()
    assert page.evaluate("window.__xss") is None
    assert dialogs == []


def test_copy_with_the_clipboard_api_and_without(new_page: PageFactory) -> None:
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    new_conversation(page)
    send(page, "Copie-moi")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    reply.get_by_role("button", name="Copy message").click()
    expect(reply.locator("button.copy")).to_have_class("icon copy copied")
    assert page.evaluate("navigator.clipboard.readText()") == "Vous avez dit : Copie-moi"

    # As on plain http over a LAN address: no clipboard API, the textarea fallback copies.
    page.evaluate(
        """() => {
        Object.defineProperty(navigator, 'clipboard', {value: undefined});
        window.__copied = [];
        const original = document.execCommand.bind(document);
        document.execCommand = (command) => {
          window.__copied.push(String(document.getSelection()) || document.activeElement.value);
          return original(command);
        };
    }"""
    )
    own = page.locator(".messages [data-role=user]")
    own.get_by_role("button", name="Copy message").click()
    expect(own.locator("button.copy")).to_have_class("icon copy copied")
    assert page.evaluate("window.__copied") == ["Copie-moi"]


def test_rename_and_delete_a_conversation(signed_in_page: Page) -> None:
    page = signed_in_page
    room_id = new_conversation(page)
    send(page, "Un message")
    expect(page.locator(".messages [data-role=assistant]")).to_have_attribute("data-state", "done")
    item = page.locator(f".room-list [data-room-id='{room_id}']")
    expect(item.locator("a")).to_have_text("Un message")
    page.once("dialog", lambda dialog: dialog.accept("Projet Lyon"))
    item.get_by_role("button", name="Rename conversation").click()
    expect(item.locator("a")).to_have_text("Projet Lyon")

    messages: list[str] = []

    def confirm(dialog: Dialog) -> None:
        messages.append(dialog.message)
        dialog.accept()

    page.once("dialog", confirm)
    item.get_by_role("button", name="Delete conversation").click()
    expect(item).to_have_count(0)
    assert messages == ["Delete “Projet Lyon” and all its messages?"]
    assert room_id not in page.url
