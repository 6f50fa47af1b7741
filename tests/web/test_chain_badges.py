"""Chain badges in a real browser: under an answer the reflexive chain wrote, one badge per stage,
collapsed; a click shows that stage's tools, results and duration, as text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import PageFactory
from tests.web.lobby_fixtures import CHAIN_ANSWER, NO_REPLY, LobbyEko, lobby_eko, lobby_pages

__all__ = ["lobby_eko", "lobby_pages"]
pytestmark = [pytest.mark.slow, pytest.mark.browser]

PAYLOAD = "<img src=x onerror=window.__xss=1>"


def test_a_chain_answer_has_one_collapsed_badge_per_stage_that_opens(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    key = lobby_eko.web.key
    room = lobby_eko.call("POST", "/v1/rooms", key, json={"kind": "direct", "name": "Chaîne"})
    exchange = lobby_eko.say(room["id"], key, f"Analyse ce dont un chat a besoin {PAYLOAD}")
    reply = exchange["assistant_message"]
    assert reply["content"] == CHAIN_ANSWER
    assert [s["node"] for s in reply["metadata"]["chain"]["chain"]] == ["OL1", "M1", "M2"]
    simple = lobby_eko.say(room["id"], key, "Merci")["assistant_message"]

    page = lobby_pages(key)
    page.evaluate("id => { location.hash = `#/chat/${id}`; }", room["id"])
    answer = page.locator(f"[data-message-id='{reply['id']}']")
    expect(answer).to_contain_text(CHAIN_ANSWER)
    badges = answer.locator("[data-testid=chain-badge]")
    expect(badges).to_have_text(["OL1 ▸ 2 turns", "M1 ▸ 1 turn", "M2 ▸ 1 turn"])
    # Collapsed by default; an answer written without the chain has no badges.
    expect(answer.locator("[data-testid=chain-detail]")).to_have_count(0)
    for badge in badges.all():
        expect(badge).to_have_attribute("aria-expanded", "false")
    expect(page.locator(f"[data-message-id='{simple['id']}']")).to_contain_text("Vous avez dit")
    expect(
        page.locator(f"[data-message-id='{simple['id']}'] [data-testid=chain-badges]")
    ).to_have_count(0)

    # OL1 unfolds: the tool it called with its arguments (the user's words, HTML shown as
    # text, never run), its result, the model and the duration.
    badges.first.click()
    expect(badges.first).to_have_attribute("aria-expanded", "true")
    detail = answer.locator("[data-testid=chain-detail][data-node=OL1]")
    expect(detail).to_be_visible()
    tool = detail.locator("[data-testid=chain-tool]")
    expect(tool).to_have_count(1)
    expect(tool).to_contain_text("search_memories(")
    expect(tool).to_contain_text(PAYLOAD)
    expect(tool).to_contain_text("result: []")
    expect(detail).to_contain_text("lobby-script")
    expect(detail).to_contain_text(re.compile(r"duration\s*\d+(\.\d)? m?s"))
    expect(detail.locator("img")).to_have_count(0)
    assert page.evaluate("window.__xss") is None

    # M2 unfolds too (no tool called); a second click folds OL1 again.
    badges.nth(2).click()
    expect(answer.locator("[data-testid=chain-detail][data-node=M2]")).to_contain_text(
        "no tool called"
    )
    badges.first.click()
    expect(detail).to_be_hidden()
    expect(badges.first).to_have_attribute("aria-expanded", "false")


def test_a_chain_that_fell_back_still_shows_its_stages(
    lobby_eko: LobbyEko, lobby_pages: PageFactory
) -> None:
    key = lobby_eko.web.key
    room = lobby_eko.call("POST", "/v1/rooms", key, json={"kind": "direct", "name": "Repli"})
    reply = lobby_eko.say(room["id"], key, f"Analyse ce dont un chat a besoin {NO_REPLY}")[
        "assistant_message"
    ]
    # The simple path wrote the answer; the chain's 8 turns are in the metadata all the same.
    assert reply["content"].startswith("Vous avez dit")
    assert reply["metadata"]["chain"]["fallback"] == "no_reply"

    page = lobby_pages(key)
    page.evaluate("id => { location.hash = `#/chat/${id}`; }", room["id"])
    answer = page.locator(f"[data-message-id='{reply['id']}']")
    expect(answer).to_contain_text("Vous avez dit")
    badges = answer.locator("[data-testid=chain-badge]")
    expect(badges).to_have_text(["OL1 ▸ 4 turns", "M1 ▸ 3 turns", "M2 ▸ 1 turn"])
    expect(answer.locator("[data-testid=chain-fallback]")).to_have_text(
        "simple answer instead (no_reply)"
    )
    badges.first.click()
    detail = answer.locator("[data-testid=chain-detail][data-node=OL1]")
    expect(detail.locator("[data-testid=chain-tool]")).to_have_count(4)
    expect(detail).to_contain_text("stage_budget")
