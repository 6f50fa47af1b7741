"""Staff pages in a real browser: a memory guard entry marked obsolete then deleted, a memory with
its source turn deleted, a failed job retried; a member is told the pages are staff only."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.web.conftest import PageFactory
from tests.web.lobby_fixtures import LobbyEko, lobby_eko, lobby_pages

__all__ = ["lobby_eko", "lobby_pages"]
pytestmark = [pytest.mark.slow, pytest.mark.browser]


def open_staff(page: Page, which: str) -> None:
    page.evaluate("which => { location.hash = `#/staff/${which}`; }", which)
    page.wait_for_selector(f"[data-testid=staff-page][data-page={which}][data-ready=true]")


def test_a_cache_entry_is_found_marked_obsolete_then_deleted(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    staff = lobby_eko.web.staff_key
    entry = lobby_eko.call(
        "POST",
        "/v1/staff/memory",
        staff,
        json={"question": "Quelle est la capitale du Kraken ?", "answer": "<b>Radio</b>-ville."},
    )
    other = lobby_eko.call(
        "POST",
        "/v1/staff/memory",
        staff,
        json={"question": "Combien de pattes a un chat ?", "answer": "Quatre."},
    )
    page = lobby_pages(staff)
    open_staff(page, "guard")
    page.fill("[data-testid=guard-search]", "Kraken")
    page.keyboard.press("Enter")
    card = page.locator(f"[data-testid=guard-entry][data-entry-id='{entry['id']}']")
    expect(card).to_be_visible()
    expect(page.locator(f"[data-entry-id='{other['id']}']")).to_have_count(0)
    expect(card.locator("[data-testid=entry-usage]")).to_have_text("used 0×")
    expect(card.locator("[data-testid=entry-status]")).to_have_text("active")
    expect(card.locator(".guard-answer")).to_have_text("<b>Radio</b>-ville.")  # text, not HTML

    card.locator("[data-testid=mark-obsolete]").click()
    expect(card.locator("[data-testid=entry-status]")).to_have_text("obsolete")
    expect(card.locator("[data-testid=mark-obsolete]")).to_have_count(0)
    stored = lobby_eko.call("GET", f"/v1/staff/memory/{entry['id']}", staff)
    assert stored["status"] == "obsolete"

    # Delete asks again in place; cancelling keeps it, confirming deletes it.
    card.locator("[data-testid=delete]").click()
    card.get_by_role("button", name="Cancel").click()
    expect(card).to_be_visible()
    card.locator("[data-testid=delete]").click()
    card.locator("[data-testid=confirm-delete]").click()
    expect(card).to_have_count(0)
    listing = lobby_eko.call("GET", "/v1/staff/memory?q=Kraken", staff)
    assert [e["id"] for e in listing["items"]] == []


def test_a_memory_shows_its_source_turn_and_is_deleted(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    staff = lobby_eko.web.staff_key
    member = lobby_eko.web.key
    room = lobby_eko.call("POST", "/v1/rooms", member, json={"kind": "direct", "name": "Maman"})
    exchange = lobby_eko.say(room["id"], member, "Le village de maman, c'est Besançon.")
    fact = lobby_eko.call(
        "POST",
        "/v1/memory/items",
        member,
        json={"kind": "fact", "subject": "maman", "content": "Le village de maman est Besançon"},
    )["item"]
    lobby_eko.set_source(fact["id"], exchange["user_message"]["id"], room["id"])
    goal = lobby_eko.call(
        "POST",
        "/v1/memory/items",
        member,
        json={"kind": "goal", "subject": "corentin", "content": "Qui est Corentin ?"},
    )["item"]

    page = lobby_pages(staff)
    open_staff(page, "memory")
    scope = page.locator(f"[data-testid=memory-scope][data-scope='{fact['scope']}']")
    expect(scope.locator("[data-kind=fact] [data-testid=memory-item]")).to_contain_text(
        ["Le village de maman est Besançon"]
    )
    expect(scope.locator("[data-kind=goal]")).to_contain_text("Qui est Corentin ?")
    expect(scope.locator("[data-kind=self] h4")).to_have_text("Self (0)")

    item = scope.locator(f"[data-item-id='{fact['id']}']")
    item.locator("[data-testid=show-sources]").click()
    quotes = item.locator("[data-testid=memory-sources] blockquote")
    expect(quotes).to_have_count(2)
    expect(quotes.nth(0)).to_contain_text("Le village de maman, c'est Besançon.")
    expect(quotes.nth(1)).to_contain_text("Vous avez dit")
    expect(quotes.nth(0)).to_have_attribute("data-message-id", exchange["user_message"]["id"])

    item.locator("[data-testid=delete]").click()
    item.locator("[data-testid=confirm-delete]").click()
    expect(item).to_have_count(0)
    remaining = lobby_eko.call("GET", f"/v1/memory/items?scope={fact['scope']}", staff)
    assert {i["id"] for i in remaining} == {goal["id"]}


def test_a_failed_job_shows_its_error_and_is_retried(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    staff = lobby_eko.web.staff_key
    job_id = lobby_eko.failed_job("RuntimeError: <script>boom</script> disk full")
    page = lobby_pages(staff)
    open_staff(page, "jobs")
    row = page.locator(f"[data-testid=job][data-job-id='{job_id}']")
    expect(row).to_have_attribute("data-status", "failed")
    expect(row.locator("[data-testid=job-error]")).to_have_text(
        "RuntimeError: <script>boom</script> disk full"
    )
    row.locator("[data-testid=job-retry]").click()
    # Back in the queue: it runs again and succeeds (the page follows the job events).
    expect(row.locator("[data-testid=job-retry]")).to_have_count(0)
    expect(page.locator(f"[data-testid=job][data-job-id='{job_id}']")).to_have_attribute(
        "data-status", re.compile("queued|running|succeeded")
    )
    expect(page.locator(f"[data-testid=job][data-job-id='{job_id}']")).to_have_attribute(
        "data-status", "succeeded"
    )
    job = next(
        j for j in lobby_eko.call("GET", "/v1/staff/jobs", staff)["jobs"] if j["id"] == job_id
    )
    assert job["status"] == "succeeded"


def test_a_member_is_told_the_staff_pages_are_staff_only(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    lobby_pages.allow_console_errors(r"status of 403 .*/v1/staff/jobs")
    page = lobby_pages(lobby_eko.web.key)
    # The shell shows no staff nav to a member; the module itself refuses a member, and says
    # the same when the API answers 403 (a role withdrawn since the page loaded).
    expect(page.locator("#staff-nav")).to_be_hidden()
    shown = page.evaluate(
        """async () => {
            const { mountStaff } = await import("/static/staff.js");
            const calls = [];
            const forbidden = async (path) => {
                calls.push(path);
                const error = new Error("Staff only");
                error.status = 403;
                throw error;
            };
            const texts = [];
            for (const role of ["member", "staff"]) {
                const box = document.createElement("div");
                document.body.append(box);
                await mountStaff(box, { me: { role }, lang: "en", api: forbidden }, "jobs");
                texts.push(box.querySelector("[data-testid=staff-only]").textContent);
            }
            return { texts, calls };
        }"""
    )
    assert shown["texts"] == ["Staff only: this page needs the staff role."] * 2
    assert shown["calls"] == ["/v1/staff/jobs?limit=200"]
    response = page.evaluate(
        """async () => (await fetch("/v1/staff/jobs")).status"""  # with the session cookie
    )
    assert response == 403
