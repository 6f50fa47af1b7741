"""Dark mode follows the system (prefers-color-scheme): dark backgrounds, readable text."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.web.conftest import PageFactory
from tests.web.test_chat_page import new_conversation, send

# WCAG's minimum contrast for body text.
READABLE = 4.5


def _rgb(css: str) -> tuple[float, float, float]:
    found = re.match(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert found, css
    r, g, b = (int(x) for x in found.groups())
    return r, g, b


def _luminance(css: str) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in _rgb(css))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _colours(page: Page, selector: str) -> tuple[str, str]:
    """(text colour, background colour) of the element; the background is the nearest
    non-transparent one up the tree."""
    colours: list[str] = page.eval_on_selector(
        selector,
        """(el) => {
            const text = getComputedStyle(el).color;
            let node = el;
            while (node) {
                const bg = getComputedStyle(node).backgroundColor;
                if (bg && bg !== "rgba(0, 0, 0, 0)" && bg !== "transparent") return [text, bg];
                node = node.parentElement;
            }
            return [text, "rgb(255, 255, 255)"];
        }""",
    )
    return colours[0], colours[1]


def test_dark_system_gives_a_dark_readable_page(new_page: PageFactory) -> None:
    page = new_page(color_scheme="dark")
    new_conversation(page)
    send(page, "Un thème sombre")
    expect(page.locator(".messages [data-role=assistant]")).to_have_attribute("data-state", "done")
    for selector in (
        "body",
        ".view-chat",
        ".messages [data-role=assistant] .msg-body",
        ".messages [data-role=user] .msg-body",
        "[data-testid=room-list] .room-title",
        "[data-testid=composer]",
        "[data-testid=search]",
    ):
        text, background = _colours(page, selector)
        assert _luminance(background) < 0.1, (selector, background)
        assert _contrast(text, background) >= READABLE, (selector, text, background)


def test_light_system_keeps_the_light_page(new_page: PageFactory) -> None:
    page = new_page(color_scheme="light")
    text, background = _colours(page, "body")
    assert _luminance(background) > 0.8, background
    assert _contrast(text, background) >= READABLE
