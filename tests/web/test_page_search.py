"""The search box: conversation titles and message text; a result opens the room at it."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.web.conftest import PageFactory, WebEko


def _room_with_history(eko: WebEko, name: str, turns: list[str], *, kind: str = "direct") -> str:
    headers = {"Authorization": f"Bearer {eko.key}"}
    room = httpx.post(
        f"{eko.url}/v1/rooms", json={"name": name, "kind": kind}, headers=headers, timeout=10
    )
    room.raise_for_status()
    room_id = str(room.json()["id"])
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text}
        for i, text in enumerate(turns)
    ]
    imported = httpx.post(
        f"{eko.url}/v1/rooms/{room_id}/messages:import",
        json={"messages": messages},
        headers=headers,
        timeout=30,
    )
    imported.raise_for_status()
    return room_id


def test_search_finds_titles_and_messages_and_opens_the_room_there(
    new_page: PageFactory, live_eko: WebEko
) -> None:
    filler = [f"Réplique ordinaire numéro {i}." for i in range(60)]
    room_id = _room_with_history(
        live_eko,
        "Safari au Kenya",
        ["Quel animal est le plus haut ?", "La girafe, le plus grand ruminant.", *filler],
    )
    page = new_page()
    search = page.get_by_role("searchbox", name="Search conversations")

    search.fill("safari ken")
    rooms = page.locator("[data-testid=search-room]")
    expect(rooms).to_have_count(1)
    expect(rooms).to_have_text("Safari au Kenya")
    expect(page.locator("[data-testid=room-list]")).to_be_hidden()

    search.fill("girafe ruminant")
    hits = page.locator("[data-testid=search-message]")
    expect(hits).to_have_count(1)
    expect(hits).to_contain_text("Safari au Kenya")
    expect(hits).to_contain_text("La girafe, le plus grand ruminant.")
    hits.click()

    found = page.locator(".messages [data-found=true]")
    expect(found).to_have_count(1)
    expect(found).to_contain_text("La girafe")
    expect(found).to_be_in_viewport()
    assert page.evaluate("location.hash").startswith(f"#/chat/{room_id}/")
    # Sixty later turns: the last one is out of view, the view stayed at the found one.
    expect(page.locator(".messages [data-role=assistant]").last).not_to_be_in_viewport()

    search.fill("mot-introuvable-xyzzy")
    expect(page.locator("[data-testid=search-none]")).to_have_text("Nothing found.")
    search.press("Escape")
    expect(page.locator("[data-testid=room-list]")).to_be_visible()
    expect(page.locator("[data-testid=search-results]")).to_be_hidden()


def test_a_lobby_message_found_opens_the_lobby_there(
    new_page: PageFactory, live_eko: WebEko
) -> None:
    filler = [f"Bavardage du salon numéro {i}." for i in range(60)]
    room_id = _room_with_history(
        live_eko,
        "Salon des oiseaux",
        ["Le colibri bat des ailes très vite.", *filler],
        kind="lobby",
    )
    page = new_page()
    page.get_by_role("searchbox", name="Search conversations").fill("colibri")
    hit = page.locator("[data-testid=search-message]")
    expect(hit).to_contain_text("Salon des oiseaux")
    hit.click()
    found = page.locator("[data-testid=lobby-messages] [data-found=true]")
    expect(found).to_contain_text("Le colibri bat des ailes")
    expect(found).to_be_in_viewport()
    assert page.evaluate("location.hash").startswith(f"#/lobby/{room_id}/")
