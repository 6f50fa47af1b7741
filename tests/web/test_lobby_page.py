"""The lobby in a real browser: two people live in one room, the assistant's spontaneous message
marked, and the status bar of a reflection (phases, colours, fade, right-click panel, trigger)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.web.conftest import PageFactory
from tests.web.lobby_fixtures import LobbyEko, lobby_eko, lobby_pages

__all__ = ["lobby_eko", "lobby_pages"]
pytestmark = [pytest.mark.slow, pytest.mark.browser]

DOCS_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "img" / "lobby.png"


def open_lobby(page: Page, room_id: str) -> None:
    page.evaluate("id => { location.hash = `#/lobby/${id}`; }", room_id)
    page.wait_for_selector(f"[data-testid=lobby][data-room-id='{room_id}'][data-ready=true]")


def message(page: Page, text: str) -> Locator:
    return page.locator("[data-testid=lobby-messages] .lobby-msg", has_text=text)


def live(page: Page, eko: LobbyEko, room_id: str, key: str, text: str) -> None:
    """Say `text` through the API and see it arrive: the page's events stream is connected."""
    eko.say(room_id, key, text)
    expect(message(page, text)).to_have_count(1)


def test_two_people_see_each_other_live_and_a_spontaneous_message_is_marked(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    alice = lobby_eko.web.key
    bob = lobby_eko.web.new_user_key("Bob")
    room_id = lobby_eko.lobby(alice, bob, name="Le salon")
    viewport = {"width": 1280, "height": 800}
    page_a = lobby_pages(alice, viewport=viewport)
    page_b = lobby_pages(bob, viewport=viewport)
    open_lobby(page_a, room_id)
    open_lobby(page_b, room_id)
    lobby_eko.say(room_id, alice, "Bonjour à tous.")
    for page in (page_a, page_b):  # both events streams are connected
        expect(message(page, "Bonjour à tous.")).to_have_count(1)

    # Alice types in her page: Bob's page shows it without a reload, with her name.
    page_a.fill("[data-testid=lobby-input]", "Salut Bob, tu bosses sur Kraken aujourd'hui ?")
    page_a.keyboard.press("Enter")
    from_alice = page_b.locator(".lobby-msg", has_text="tu bosses sur Kraken")
    expect(from_alice).to_have_count(1)
    expect(from_alice.locator("[data-testid=lobby-sender]")).to_have_text("Client")
    expect(page_a.locator(".lobby-msg", has_text="tu bosses sur Kraken")).to_have_count(1)

    # And the other way round.
    page_b.fill("[data-testid=lobby-input]", "Oui, on merge la radio ce soir.")
    page_b.keyboard.press("Enter")
    expect(page_a.locator(".lobby-msg", has_text="on merge la radio")).to_have_count(1)
    expect(
        page_a.locator(".lobby-msg", has_text="on merge la radio").locator(
            "[data-testid=lobby-sender]"
        )
    ).to_have_text("Bob")
    expect(page_b.locator("[data-testid=lobby-members]")).to_have_text("2 members")

    # A reflection speaks on its own: both pages show the message, marked spontaneous; a
    # person's messages are not.
    lobby_eko.goal(room_id, alice, "C'est quoi exactement Kraken FM ?")
    lobby_eko.call("POST", f"/v1/rooms/{room_id}/reflection/trigger", alice)
    for page in (page_a, page_b):
        spontaneous = page.locator(".lobby-msg.spontaneous")
        expect(spontaneous).to_have_count(1)
        expect(spontaneous).to_contain_text("Au fait, C'est quoi exactement Kraken FM ?")
        expect(spontaneous.locator("[data-testid=spontaneous-badge]")).to_have_text("spontaneous")
        expect(spontaneous).to_have_attribute("data-role", "assistant")
        expect(
            page.locator(".lobby-msg[data-role=user] [data-testid=spontaneous-badge]")
        ).to_have_count(0)
    expect(page_a.locator("[data-testid=statusbar]")).to_have_class(
        re.compile(r"\bdecision-message\b")
    )
    if os.environ.get("EKO_UPDATE_DOCS_IMAGES"):
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        page_a.screenshot(path=str(DOCS_IMAGE))

    # Naming the assistant gets an answer, shown live to both and not marked spontaneous.
    page_b.fill("[data-testid=lobby-input]", "Eko, c'est notre radio du vendredi.")
    page_b.keyboard.press("Enter")
    for page in (page_a, page_b):
        answers = page.locator(".lobby-msg[data-role=assistant]")
        expect(answers).to_have_count(2)
        expect(answers.nth(1)).to_contain_text("Vous avez dit")
        expect(answers.nth(1)).not_to_have_class(re.compile(r"\bspontaneous\b"))


def test_a_reflection_that_speaks_shows_its_phases_in_violet_then_fades(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    alice = lobby_eko.web.key
    room_id = lobby_eko.lobby(alice)
    page = lobby_pages(alice)
    open_lobby(page, room_id)
    live(page, lobby_eko, room_id, alice, "On parle de radio ce soir.")
    lobby_eko.goal(room_id, alice, "Qui est Corentin ?")
    bar = page.locator("[data-testid=statusbar]")
    phase = page.locator("[data-testid=statusbar-phase]")

    # The right-click panel: counters and history, before any reflection.
    bar.click(button="right")
    panel = page.locator("[data-testid=reflection-panel]")
    expect(panel).to_be_visible()
    expect(panel.locator("[data-testid=total-reflections]")).to_have_text("0")
    expect(panel).to_contain_text("No reflection yet.")

    # Its button reflects now: the bar goes through every phase live.
    panel.locator("[data-testid=reflection-trigger]").click()
    expect(phase).to_have_text("thinking…")
    expect(bar).to_have_class(re.compile(r"\bactive\b"))
    expect(bar).to_have_attribute("data-trail", "gathering context thinking")
    expect(phase).to_have_text("done: spoke")
    expect(bar).to_have_attribute("data-trail", "gathering context thinking done")
    expect(bar).to_have_class(re.compile(r"\bdone decision-message$"))
    colour = bar.evaluate("node => getComputedStyle(node).borderColor")
    assert colour == "rgb(124, 58, 237)"  # violet

    # The panel now counts it, and its history row says when, how long and how many tokens.
    expect(panel.locator("[data-testid=today-interventions]")).to_have_text("1")
    expect(panel.locator("[data-testid=today-model-calls]")).to_have_text("1")
    expect(panel.locator("[data-testid=today-passes]")).to_have_text("0")
    rows = panel.locator("[data-testid=history-row]")
    expect(rows).to_have_count(1)
    cells = rows.first.locator("td")
    expect(cells.nth(1)).to_have_text("message")
    expect(cells.nth(2)).to_contain_text(" s")  # the model thought for more than a second
    tokens = lobby_eko.call("GET", f"/v1/rooms/{room_id}/reflection/status", alice)["history"][0][
        "llm_tokens"
    ]
    expect(cells.nth(3)).to_have_text(str(tokens))
    # Issue #37: the history table was cut on the right (the panel scrolled sideways).
    assert panel.evaluate("p => p.scrollWidth <= p.clientWidth"), panel.evaluate(
        "p => [p.scrollWidth, p.clientWidth]"
    )
    expect(page.locator(".lobby-msg.spontaneous", has_text="Qui est Corentin")).to_have_count(1)

    # A left click elsewhere closes the panel.
    page.locator("[data-testid=lobby-messages]").click(position={"x": 5, "y": 5})
    expect(panel).to_have_count(0)

    # Done, then faded out (after 5 s).
    expect(bar).not_to_have_class(re.compile(r"\bfaded\b"))
    expect(bar).to_have_class(re.compile(r"\bfaded\b"), timeout=9000)
    expect(bar.locator(".statusbar-live")).to_have_css("opacity", "0")


def test_a_reflection_that_passes_is_shown_in_red(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    alice = lobby_eko.web.key
    room_id = lobby_eko.lobby(alice)
    page = lobby_pages(alice, locale="fr-FR", viewport={"width": 390, "height": 844})
    open_lobby(page, room_id)
    live(page, lobby_eko, room_id, alice, "Rien de spécial.")
    lobby_eko.goal(room_id, alice, "[pass] C'est quoi le plan Max ?")
    bar = page.locator("[data-testid=statusbar]")
    phase = page.locator("[data-testid=statusbar-phase]")

    bar.click(button="right")
    page.locator("[data-testid=reflection-trigger]").click()
    expect(phase).to_have_text("réflexion…")
    expect(phase).to_have_text("terminé : passe")
    expect(bar).to_have_attribute("data-trail", "gathering context thinking done")
    expect(bar).to_have_class(re.compile(r"\bdecision-pass\b"))
    colour = bar.evaluate("node => getComputedStyle(node).borderColor")
    assert colour == "rgb(220, 38, 38)"  # red
    panel = page.locator("[data-testid=reflection-panel]")
    expect(panel.locator("[data-testid=today-passes]")).to_have_text("1")
    expect(panel.locator("[data-testid=today-interventions]")).to_have_text("0")
    expect(panel.locator("[data-testid=history-row] td.decision-pass")).to_have_text("passe")
    assert panel.evaluate("p => p.scrollWidth <= p.clientWidth"), panel.evaluate(
        "p => [p.scrollWidth, p.clientWidth]"
    )
    # A pass says nothing in the room. At phone width nothing sticks out, panel included.
    expect(page.locator(".lobby-msg.spontaneous")).to_have_count(0)
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
    box = panel.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)


def test_a_lobby_is_made_from_the_page_and_a_member_added_sees_it(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    alice = lobby_eko.web.new_user_key("Chloé")
    bob = lobby_eko.web.new_user_key("Bruno")
    page_a = lobby_pages(alice)
    page_a.click("#new-lobby")
    lobby = page_a.locator("[data-testid=lobby][data-ready=true]")
    expect(lobby).to_have_count(1)
    room_id = lobby.get_attribute("data-room-id")
    assert room_id and page_a.url.endswith(f"#/lobby/{room_id}")
    expect(page_a.locator("[data-testid=room-list] .room-lobby")).to_have_count(1)

    page_a.fill("[data-testid=lobby-add-member]", lobby_eko.public_id(bob))
    page_a.click("[data-testid=lobby-add-member-submit]")
    expect(page_a.locator("[data-testid=lobby-members]")).to_have_text("2 members")
    # Issue #37: "Added." was shown in the error colour.
    added = page_a.locator(".lobby-notice", has_text="Added.")
    expect(added).to_be_visible()
    expect(added).not_to_have_css("color", "rgb(185, 28, 28)")

    page_b = lobby_pages(bob)  # Bruno's list has the lobby, and his message reaches Chloé live
    expect(page_b.locator(f"[data-testid=room-list] [data-room-id='{room_id}']")).to_have_count(1)
    open_lobby(page_b, room_id)
    page_b.fill("[data-testid=lobby-input]", "Me voilà dans le salon.")
    page_b.keyboard.press("Enter")
    expect(message(page_a, "Me voilà dans le salon.")).to_have_count(1)
