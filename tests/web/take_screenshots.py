"""The README's screenshots of the page (not a test: run it by hand after a visible change).

    .venv/bin/python -m tests.web.take_screenshots

Starts a real server on a temp SQLite database with a scripted model (replies written below,
picked by the question, as the browser tests' model does), fills it through the API, and
shoots in Debian's headless Chromium at 1280×800 (the size of docs/img/lobby.png):
  docs/img/signin.png   the sign-in form, a name and a password typed
  docs/img/chat.png     a conversation of two exchanges, the second with a highlighted Python
                        block, other conversations in the list on the left
The lobby's (docs/img/lobby.png) comes from its browser test, which builds that scene:
`EKO_UPDATE_DOCS_IMAGES=1 .venv/bin/pytest tests/web/test_lobby_page.py -k two_people`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, ViewportSize, sync_playwright

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, SIGNIN_NAME, SIGNIN_PASSWORD
from tests.web.scripted_model import said

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
# Earlier conversations, listed under the one shown (their first message is their title).
OTHER_ROOMS = (
    "Plan a three-day trip to Lisbon in May",
    "Summarise Tuesday's meeting notes",
    "Why does my sourdough not rise?",
    "Draft a polite reply to the landlord",
)
EXCHANGES = (
    (
        "What is the difference between a list and a tuple in Python?",
        "A **list** can change after it is made: you append, remove or replace items. A "
        "**tuple** cannot: once built, it stays as it is, and it can be a dictionary key.\n\n"
        "Use a tuple for a fixed record (a point, a date), a list for a collection that grows.",
    ),
    (
        "Show me how to count the words of a text file.",
        "With `collections.Counter`, which counts anything you give it:\n\n"
        "```python\n"
        "from collections import Counter\n"
        "from pathlib import Path\n\n"
        'text = Path("notes.txt").read_text(encoding="utf-8")\n'
        "words = Counter(text.lower().split())\n\n"
        "for word, count in words.most_common(5):\n"
        '    print(f"{word:<12} {count}")\n'
        "```\n\n"
        "`most_common(5)` gives the five most frequent words with their counts; split on "
        '`re.findall(r"\\w+", text)` instead to leave punctuation out.',
    ),
)


def screenshot_model() -> FunctionModel:
    replies = dict(EXCHANGES)

    def answer(request: ProviderRequest) -> str:
        if request.json_schema is not None:
            return "not json"  # classifiers fall back to their deterministic routes
        return replies.get(said(request), "Noted.")

    return FunctionModel(answer, name="screenshots", model="screenshots")


def fill(url: str, headers: dict[str, str]) -> str:
    """The conversations; returns the id of the one shown."""
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        client.patch("/v1/me", json={"display_name": "Camille"}).raise_for_status()
        for text in OTHER_ROOMS:
            room = client.post("/v1/rooms", json={}).raise_for_status().json()
            client.post(
                f"/v1/rooms/{room['id']}/messages?respond=false", json={"content": text}
            ).raise_for_status()
        room = client.post("/v1/rooms", json={}).raise_for_status().json()
        for question, _ in EXCHANGES:
            client.post(
                f"/v1/rooms/{room['id']}/messages", json={"content": question}
            ).raise_for_status()
        return str(room["id"])


def new_page(browser: Browser, url: str) -> Page:
    context = browser.new_context(viewport=VIEWPORT, locale="en-US", base_url=url)
    page = context.new_page()
    page.on("pageerror", lambda error: print(f"page error: {error}"))
    return page


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'eko.db'}"
        run_isolated(_migrate(url))
        with running_eko(url, [screenshot_model()], assistant_name="Eko") as eko:
            room_id = fill(eko.url, eko.headers)
            session = httpx.post(f"{eko.url}/v1/auth/key", headers=eko.headers)
            token = session.raise_for_status().cookies["eko_session"]
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = new_page(browser, eko.url)
                    page.goto("/")
                    page.fill(SIGNIN_NAME, "Camille")
                    page.fill(SIGNIN_PASSWORD, "correct horse battery")
                    page.screenshot(path=str(IMAGES / "signin.png"))

                    page = new_page(browser, eko.url)
                    page.context.add_cookies(
                        [{"name": "eko_session", "value": token, "url": eko.url}]
                    )
                    page.goto(f"/#/chat/{room_id}")
                    page.wait_for_selector(".messages pre code.hljs")
                    page.wait_for_load_state("networkidle")
                    page.locator("[data-testid=composer]").blur()
                    page.screenshot(path=str(IMAGES / "chat.png"))
                finally:
                    browser.close()
    for name in ("signin.png", "chat.png"):
        print(f"{IMAGES / name}: {(IMAGES / name).stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
