"""Honest waiting in the page (issue #37): a typing indicator until the first word, the cause
of a fallback in the page's language, a "cut here" marker with Continue on a truncated reply,
and a banner that never pushes the composer out of sight."""

from __future__ import annotations

import json
from collections.abc import Callable

from playwright.sync_api import Page, Route, expect

from tests.web.conftest import PageFactory
from tests.web.scripted_model import CUT_REPLY
from tests.web.test_chat_page import COMPOSER, new_conversation, send

REPLY = ".messages [data-role=assistant]"

# Records, on every change of the message list, whether a reply showed the typing indicator
# while it had no text yet, and whether the indicator ever stayed next to text.
WATCH_TYPING = """() => {
  window.typing = { beforeText: false, withText: false, animation: '' };
  const list = document.querySelector('[data-testid=messages]');
  new MutationObserver(() => {
    for (const reply of list.querySelectorAll('[data-role=assistant]')) {
      if (!reply.querySelector('[data-testid=typing]')) continue;
      const text = reply.querySelector('.msg-body').textContent;
      if (text) window.typing.withText = true;
      else window.typing.beforeText = true;
      const dot = reply.querySelector('[data-testid=typing] .typing-dots i');
      window.typing.animation ||= dot ? getComputedStyle(dot).animationName : '';
    }
  }).observe(list, { childList: true, subtree: true, characterData: true });
}"""


def test_a_reply_shows_eko_typing_until_its_first_word(new_page: PageFactory) -> None:
    page = new_page()
    new_conversation(page)
    page.evaluate(WATCH_TYPING)
    send(page, "lentement s'il te plaît")
    reply = page.locator(REPLY)
    typing = reply.locator("[data-testid=typing]")
    # Shown at once (animated, below), and no empty grey bubble next to it.
    expect(typing).to_have_text("Eko is writing")
    expect(reply.locator(".msg-body")).to_contain_text("lentement0")
    expect(typing).to_have_count(0)  # the first word replaced it
    expect(reply).to_have_attribute("data-state", "done", timeout=20_000)
    seen = page.evaluate("window.typing")
    assert seen == {"beforeText": True, "withText": False, "animation": "typing"}


def test_a_typing_indicator_in_french(new_page: PageFactory) -> None:
    page = new_page(locale="fr-FR")
    new_conversation(page)
    send(page, "lentement")
    expect(page.locator(f"{REPLY} [data-testid=typing]")).to_have_text("Eko écrit")
    expect(page.locator(REPLY)).to_have_attribute("data-state", "done", timeout=20_000)


def test_a_fallback_says_why_in_the_pages_language(new_page: PageFactory) -> None:
    page = new_page()
    new_conversation(page)
    send(page, "Le modèle casse")
    reply = page.locator(REPLY)
    expect(reply).to_have_attribute("data-state", "done")
    cause = reply.locator("[data-testid=fallback-cause]")
    expect(cause).to_have_text("The model failed to answer.")
    expect(cause).to_have_attribute("data-cause", "error")
    assert "llm_error" not in reply.inner_text()  # no raw code in the bubble
    send(page, "Le modèle est injoignable")
    unreachable = reply.nth(1).locator("[data-testid=fallback-cause]")
    expect(unreachable).to_have_text("The model could not be reached.")
    expect(unreachable).to_have_attribute("data-cause", "unreachable")

    french = new_page(locale="fr-FR")
    new_conversation(french)
    send(french, "Il casse encore")
    expect(french.locator(f"{REPLY} [data-testid=fallback-cause]")).to_have_text(
        "Le modèle n'a pas pu répondre."
    )
    # A model's answer has no cause line.
    send(page, "Et maintenant ?")
    expect(reply.nth(2)).to_have_attribute("data-state", "done")
    expect(reply.nth(2).locator("[data-testid=fallback-cause]")).to_have_count(0)


def test_each_cause_has_its_words(new_page: PageFactory) -> None:
    """The page reads metadata.fallback_cause (busy, timeout, unreachable) from the stored
    reply: served here as the API would store it."""
    page = new_page()
    room_id = new_conversation(page)
    page.route(f"**/v1/rooms/{room_id}/messages?limit=200", _stored_fallbacks(room_id))
    page.reload()
    replies = page.locator(f"{REPLY} [data-testid=fallback-cause]")
    expect(replies).to_have_text(
        [
            "The model was busy with other people and ran out of time.",
            "The model took too long to answer.",
            "The model could not be reached.",
            "The model failed to answer.",  # an unknown cause says no more than that
        ]
    )


def _stored_fallbacks(room_id: str) -> Callable[[Route], None]:
    def message(seq: int, role: str, **extra: object) -> dict[str, object]:
        return {
            "id": f"m{seq}",
            "room_id": room_id,
            "seq": seq,
            "role": role,
            "type": "message",
            "content": "Désolé…" if role == "assistant" else "Bonjour",
            "reasoning": None,
            "tool_calls": None,
            "metadata": {},
            "char_count": 7,
            "reply_to_id": None,
            "created_at": "2026-11-27T00:00:00Z",
            **extra,
        }

    items: list[dict[str, object]] = []
    for n, cause in enumerate(("busy", "timeout", "unreachable", "mystery")):
        items.append(message(2 * n + 1, "user"))
        items.append(
            message(
                2 * n + 2,
                "assistant",
                type="fallback",
                reply_to_id=f"m{2 * n + 1}",
                metadata={"fallback": "llm_error", "fallback_cause": cause},
            )
        )

    def fulfil(route: Route) -> None:
        route.fulfill(
            status=200,
            content_type="application/json",
            body=json.dumps({"items": items, "next_before": None}),
        )

    return fulfil


def test_a_truncated_reply_is_marked_and_can_continue(new_page: PageFactory) -> None:
    page = new_page()
    new_conversation(page)
    send(page, "tronque ta réponse")
    first = page.locator(REPLY).first
    expect(first).to_have_attribute("data-state", "done")
    expect(first.locator(".msg-body")).to_have_text(CUT_REPLY)
    cut = first.locator("[data-testid=truncated]")
    expect(cut).to_contain_text("Cut here: the reply reached its length limit.")
    # Stored so: the marker comes back after a reload.
    page.reload()
    expect(cut).to_be_visible()
    cut.locator("[data-testid=continue]").click()
    expect(page.locator(".messages [data-role=user] .msg-body").last).to_have_text("Continue.")
    second = page.locator(REPLY).nth(1)
    expect(second).to_have_attribute("data-state", "done")
    expect(second.locator(".msg-body")).to_have_text("Vous avez dit : Continue.")
    expect(second.locator("[data-testid=truncated]")).to_have_count(0)
    # The first keeps its marker; Continue is offered on the last reply only.
    expect(cut).to_be_visible()
    expect(cut.locator("[data-testid=continue]")).to_have_count(0)


def _busy_health(route: Route) -> None:
    body = {
        "status": "healthy",
        "model": {"status": "busy", "providers": [{"name": "web", "circuit": "closed"}]},
    }
    route.fulfill(status=200, content_type="application/json", body=json.dumps(body))


def _in_view(page: Page, selector: str, viewport: dict[str, int]) -> None:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], (selector, box)
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], (selector, box)


def _below_banner(page: Page, selector: str) -> None:
    banner = page.locator("[data-testid=banner]").bounding_box()
    box = page.locator(selector).bounding_box()
    assert banner is not None and box is not None
    assert box["y"] >= banner["y"] + banner["height"], (selector, box, banner)


def test_the_banner_leaves_the_composer_in_sight(new_page: PageFactory) -> None:
    for viewport, locale in (
        ({"width": 390, "height": 844}, "fr-FR"),  # a phone; French: the longer banner
        ({"width": 1280, "height": 720}, "en-US"),
    ):
        page = new_page(locale=locale, viewport=viewport)
        page.route("**/health", _busy_health)
        phone = viewport["width"] < 720  # the conversation list slides over the chat
        if phone:
            page.click("#rooms-toggle")
        new_conversation(page)
        for n in range(12):  # a conversation longer than the screen
            send(page, f"Message {n} " + "assez long " * 10)
            expect(page.locator(REPLY).nth(n)).to_have_attribute("data-state", "done")
        page.reload()
        expect(page.locator("[data-testid=banner]")).to_be_visible()
        expect(page.locator("[data-testid=banner]")).to_have_attribute("data-kind", "model_busy")
        for selector in (COMPOSER, "button.send"):
            _in_view(page, selector, viewport)
            _below_banner(page, selector)
        # The lobby's composer and its "add member" row too.
        if phone:
            page.click("#rooms-toggle")
        page.click("#new-lobby")
        expect(page.locator("[data-testid=lobby-add-member]")).to_be_visible()
        for selector in (
            "[data-testid=lobby-input]",
            "[data-testid=lobby-send]",
            "[data-testid=lobby-add-member]",
            "[data-testid=lobby-add-member-submit]",
        ):
            _in_view(page, selector, viewport)
            _below_banner(page, selector)
