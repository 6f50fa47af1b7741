"""Browser tests of the web page: Debian's headless Chromium driven by Playwright, against a real
Eko server (tests/api/live_server.running_eko) on a temp SQLite database and a scripted model
(tests/web/scripted_model.py).

Fixtures (stable names, used by every tests/web module):
    live_eko        the server: .url, .key (a pro member), .staff_key, .new_user_key(name)
    browser         one Chromium for the session
    new_page        factory: new_page(key=None, *, locale="en-US", viewport=None, sign_in=True,
                    color_scheme="light")
                    -> a Page in a fresh context, signed in with `key` (default: live_eko.key)
                    through the form's "use an API key" (the page then holds a session cookie);
                    new_page.allow_console_errors(regex) tolerates matching console errors
    signed_in_page  new_page() for the usual case

Every page of a test fails the test on a console error or an uncaught page error, and is
screenshotted into tests/web/screenshots/<test>[-n].png when the test ends.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.scripted_model import web_model

CHROMIUM = os.environ.get("EKO_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).parent / "screenshots"
# The machine running the suite may be busy: waits (actions and `expect`) get 10 s, not 5 s.
TIMEOUT_MS = 10_000
expect.set_options(timeout=TIMEOUT_MS)
# The sign-in form and the signed-in shell, as the page marks them (eko/web/signin.js, shell.js).
SIGNIN_NAME = "[data-testid=signin-name]"
SIGNIN_PASSWORD = "[data-testid=signin-password]"
SIGNIN_SUBMIT = "[data-testid=signin-submit]"
SIGNIN_USE_KEY = "[data-testid=signin-use-key]"
SIGNIN_KEY = "[data-testid=signin-key]"
SIGNIN_KEY_SUBMIT = "[data-testid=signin-key-submit]"
SIGNED_IN = "[data-testid=room-list][data-loaded]"


def sign_in_with_key(page: Page, key: str) -> None:
    """The sign-in form's "use an API key": the server turns the key into a session cookie."""
    page.click(SIGNIN_USE_KEY)
    page.fill(SIGNIN_KEY, key)
    page.click(SIGNIN_KEY_SUBMIT)


def sign_in_with_password(page: Page, name: str, password: str) -> None:
    page.fill(SIGNIN_NAME, name)
    page.fill(SIGNIN_PASSWORD, password)
    page.click(SIGNIN_SUBMIT)


@dataclass(frozen=True)
class WebEko:
    url: str
    key: str
    staff_key: str

    def new_user_key(self, display_name: str = "Other", *, is_pro: bool = True) -> str:
        """A new member (through the staff API); returns their API key."""
        response = httpx.post(
            f"{self.url}/v1/users",
            json={"display_name": display_name, "is_pro": is_pro},
            headers={"Authorization": f"Bearer {self.staff_key}"},
            timeout=10,
        )
        response.raise_for_status()
        return str(response.json()["api_key"])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is slow and needs the browser."""
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.browser)


# Package scope, not session: Playwright's sync API runs an event loop in this thread while
# the browser is open, so it must close before any async test outside tests/web runs.
@pytest.fixture(scope="package")
def live_eko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebEko]:
    if not Path(CHROMIUM).exists():
        why = f"no Chromium at {CHROMIUM} (scripts/setup --dev installs Debian's)"
        if os.environ.get("CI"):  # CI installs it: a browser suite that skips there is a defect
            pytest.fail(why)
        pytest.skip(why)
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('web-db') / 'eko.db'}"
    run_isolated(_migrate(url))
    # A scripted failure ("casse") must not open the circuit for the tests that follow.
    with running_eko(url, [web_model()], assistant_name="Eko", llm_breaker_failures=100) as eko:
        yield WebEko(eko.url, eko.key, eko.staff_key)


@pytest.fixture(scope="package")
def browser(live_eko: WebEko) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class PageFactory:
    """Makes signed-in pages in fresh contexts; collects their errors and screenshots them."""

    browser: Browser
    eko: WebEko
    pages: list[Page] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow_console_errors(self, pattern: str) -> None:
        self.allowed.append(re.compile(pattern))

    def __call__(
        self,
        key: str | None = None,
        *,
        locale: str = "en-US",
        viewport: dict[str, int] | None = None,
        sign_in: bool = True,
        color_scheme: Literal["light", "dark"] = "light",
    ) -> Page:
        options: dict[str, Any] = {
            "locale": locale,
            "base_url": self.eko.url,
            "color_scheme": color_scheme,
        }
        if viewport is not None:
            options["viewport"] = viewport
        context = self.browser.new_context(**options)
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        index = len(self.pages)
        page.on("console", lambda message: self._console(index, message))
        page.on("pageerror", lambda error: self.errors.append(f"page {index}: {error}"))
        self.pages.append(page)
        page.goto("/")
        if sign_in:
            sign_in_with_key(page, key or self.eko.key)
            page.wait_for_selector(SIGNED_IN)
        return page

    def _console(self, index: int, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url", "")
            self.errors.append(f"page {index}: console: {message.text} ({where})")

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]

    def finish(self, test_name: str) -> None:
        SCREENSHOTS.mkdir(exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", test_name)
        for index, page in enumerate(self.pages):
            suffix = "" if index == 0 else f"-{index}"
            try:
                page.screenshot(path=str(SCREENSHOTS / f"{name}{suffix}.png"), full_page=True)
            finally:
                page.context.close()


@pytest.fixture
def new_page(
    browser: Browser, live_eko: WebEko, request: pytest.FixtureRequest
) -> Iterator[PageFactory]:
    factory = PageFactory(browser, live_eko)
    yield factory
    factory.finish(request.node.name)
    errors = factory.unexpected_errors()
    if errors:
        pytest.fail("errors in the browser:\n" + "\n".join(errors))


@pytest.fixture
def signed_in_page(new_page: PageFactory) -> Page:
    return new_page()
