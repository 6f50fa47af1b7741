"""Versions in the page: browse a reply's regenerated versions; edit one's last message and
resend it, then browse back to the old message and the old answer."""

from __future__ import annotations

from playwright.sync_api import Locator, Page, expect

from tests.web.test_chat_page import new_conversation, send

USER = ".messages [data-role=user]"
REPLY = ".messages [data-role=assistant]"


def body(message: Locator) -> Locator:
    return message.locator(".msg-body")


def pager(message: Locator) -> Locator:
    return message.locator("[data-testid=version-label]")


def test_regenerate_twice_then_browse_the_three_versions(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Donne une version")
    reply = page.locator(REPLY)
    expect(reply).to_have_attribute("data-state", "done")
    texts = [body(reply).inner_text()]
    expect(reply.locator("[data-testid=version-pager]")).to_have_count(0)  # one version only
    for n in (2, 3):
        reply.get_by_role("button", name="Regenerate the reply").click()
        expect(reply.locator(".badge-version")).to_have_text(f"Version {n}")
        expect(reply).to_have_attribute("data-state", "done")
        texts.append(body(reply).inner_text())
    assert len(set(texts)) == 3 and all(t.startswith("Version ") for t in texts)
    expect(pager(reply)).to_have_text("3/3")
    previous = reply.get_by_role("button", name="Previous version")
    following = reply.get_by_role("button", name="Next version")
    expect(following).to_be_disabled()
    previous.click()
    expect(pager(reply)).to_have_text("2/3")
    expect(body(reply)).to_have_text(texts[1])
    previous.click()
    expect(pager(reply)).to_have_text("1/3")
    expect(body(reply)).to_have_text(texts[0])
    expect(previous).to_be_disabled()
    following.click()
    following.click()
    expect(pager(reply)).to_have_text("3/3")
    expect(body(reply)).to_have_text(texts[2])
    # Still one reply in the conversation, the latest one as stored.
    expect(page.locator(REPLY)).to_have_count(1)


def test_edit_the_last_message_and_resend_then_browse_back(signed_in_page: Page) -> None:
    page = signed_in_page
    new_conversation(page)
    send(page, "Premier")
    expect(page.locator(REPLY).last.locator(".msg-body")).to_have_text("Vous avez dit : Premier")
    # The next message is sent once this reply is finished, as a person would.
    expect(page.locator(REPLY).last).to_have_attribute("data-state", "done")
    send(page, "Bonjour")
    mine, reply = page.locator(USER).last, page.locator(REPLY).last
    expect(body(reply)).to_have_text("Vous avez dit : Bonjour")
    expect(reply).to_have_attribute("data-state", "done")
    # Only the last message of the conversation can be edited.
    expect(page.locator(f"{USER} [data-testid=edit-message]")).to_have_count(1)
    expect(page.locator(USER).first.locator("[data-testid=edit-message]")).to_have_count(0)

    mine.locator("[data-testid=edit-message]").click()
    editor = mine.locator("[data-testid=edit-input]")
    expect(editor).to_have_value("Bonjour")
    mine.locator("[data-testid=edit-cancel]").click()  # cancel puts the text back
    expect(body(mine)).to_have_text("Bonjour")
    mine.locator("[data-testid=edit-message]").click()
    editor.fill("Bonsoir")
    mine.get_by_role("button", name="Save & send").click()

    expect(body(reply)).to_have_text("Vous avez dit : Bonsoir")
    expect(reply).to_have_attribute("data-state", "done")
    expect(body(mine)).to_have_text("Bonsoir")
    expect(page.locator(USER)).to_have_count(2)
    expect(page.locator(REPLY)).to_have_count(2)
    # Both old versions are kept and browsable.
    expect(pager(mine)).to_have_text("2/2")
    expect(pager(reply)).to_have_text("2/2")
    mine.get_by_role("button", name="Previous version").click()
    expect(body(mine)).to_have_text("Bonjour")
    expect(pager(mine)).to_have_text("1/2")
    reply.get_by_role("button", name="Previous version").click()
    expect(body(reply)).to_have_text("Vous avez dit : Bonjour")
    expect(pager(reply)).to_have_text("1/2")
    reply.get_by_role("button", name="Next version").click()
    expect(body(reply)).to_have_text("Vous avez dit : Bonsoir")

    # After a reload the stored state: the edited message and its new answer, both versioned.
    page.reload()
    expect(page.locator(REPLY).last.locator(".msg-body")).to_have_text("Vous avez dit : Bonsoir")
    expect(page.locator(USER).last.locator(".msg-body")).to_have_text("Bonsoir")
    expect(pager(page.locator(USER).last)).to_have_text("2/2")
