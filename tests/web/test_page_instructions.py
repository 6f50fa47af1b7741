"""Per-conversation instructions set in the page reach the model (through the live server)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import PageFactory
from tests.web.test_chat_page import new_conversation, send


def test_instructions_set_in_the_page_reach_the_model(new_page: PageFactory) -> None:
    page = new_page()
    new_conversation(page)
    send(page, "Quelles consignes ?")
    replies = page.locator(".messages [data-role=assistant]")
    expect(replies.nth(0)).to_contain_text("Consigne reçue : aucune.")

    box = page.locator("[data-testid=instructions]")
    box.locator("summary").click()
    box.locator("[data-testid=instructions-text]").fill("Signe chaque réponse CONSIGNE-ZEBRE.")
    box.locator("[data-testid=instructions-save]").click()
    expect(box.locator("[data-testid=instructions-status]")).to_have_text(
        "Saved: the next replies follow them."
    )
    expect(box.locator("summary")).to_contain_text("(set)")

    send(page, "Et maintenant, quelles consignes ?")
    expect(replies.nth(1)).to_contain_text("Consigne reçue : CONSIGNE-ZEBRE.")

    # Stored: a reload shows them.
    page.reload()
    page.wait_for_selector("[data-testid=room-list][data-loaded]")
    expect(page.locator("[data-testid=instructions-text]")).to_have_value(
        "Signe chaque réponse CONSIGNE-ZEBRE."
    )
    expect(page.locator("[data-testid=instructions] summary")).to_contain_text("(set)")
