"""👍/👎 on Eko's replies: a thumbs up teaches the memory guard, and staff see the entry."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.web.conftest import PageFactory, WebEko
from tests.web.test_chat_page import new_conversation, send

QUESTION = "Quelle est la capitale du Pérou aujourd'hui ?"


def test_thumbs_up_is_learned_and_listed_on_the_staff_guard_page(
    new_page: PageFactory, live_eko: WebEko
) -> None:
    page = new_page()
    new_conversation(page)
    send(page, QUESTION)
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    up = reply.get_by_role("button", name="Good answer")
    down = reply.get_by_role("button", name="Bad answer")
    expect(up).to_have_attribute("aria-pressed", "false")
    up.click()
    expect(reply.locator("[data-testid=feedback-note]")).to_have_text(
        "Thanks: remembered for next time."
    )
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")

    # The rating is stored: a reload shows it pressed.
    page.reload()
    page.wait_for_selector("[data-testid=room-list][data-loaded]")
    expect(
        page.locator(".messages [data-role=assistant]").get_by_role("button", name="Good answer")
    ).to_have_attribute("aria-pressed", "true")

    staff = new_page(live_eko.staff_key)
    staff.goto("/#/staff/guard")
    entry = staff.locator("[data-testid=guard-entry]").filter(has_text="capitale du Pérou")
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text(f"Vous avez dit : {QUESTION}")

    expect(entry).to_have_class(re.compile(r"\bstatus-active\b"))

    # A thumbs down takes the entry back (kept for audit, never served again).
    page.locator(".messages [data-role=assistant]").get_by_role("button", name="Bad answer").click()
    expect(page.locator("[data-testid=feedback-note]")).to_have_text("Thanks for the feedback.")
    staff.reload()
    staff.wait_for_selector("[data-testid=guard-total]")
    expect(entry).to_have_class(re.compile(r"\bstatus-obsolete\b"))
