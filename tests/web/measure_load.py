"""Page load on localhost, measured in Debian's headless Chromium (not a test: run it by hand).

    .venv/bin/python -m tests.web.measure_load [--runs 10]

Starts a real server (the browser tests' scripted model, a temp SQLite database with 20 rooms),
then times, in a fresh browser context each run (cold cache):
  sign-in form   navigation to `/` until the sign-in form is visible
  signed in      with a session cookie set, navigation to `/` until the room list shows its
                 rooms
and prints the median, min and max of each. A trivial baseline in the same run: an empty HTML
page of the same server (GET /health) loaded the same way.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, sync_playwright

from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, SIGNIN_NAME
from tests.web.scripted_model import web_model


def timed(
    browser: Browser,
    url: str,
    runs: int,
    prepare: Callable[[Page], None] | None,
    ready: Callable[[Page], object],
) -> list[float]:
    times = []
    for _ in range(runs):
        context = browser.new_context()
        page = context.new_page()
        if prepare is not None:
            prepare(page)
        start = time.perf_counter()
        page.goto(url)
        ready(page)
        times.append((time.perf_counter() - start) * 1000)
        context.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'eko.db'}"
        run_isolated(_migrate(url))
        with running_eko(url, [web_model()]) as eko:
            for i in range(20):
                room = httpx.post(f"{eko.url}/v1/rooms", json={}, headers=eko.headers).json()
                httpx.post(
                    f"{eko.url}/v1/rooms/{room['id']}/messages?respond=false",
                    json={"content": f"conversation {i}"},
                    headers=eko.headers,
                ).raise_for_status()
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    # One warm-up (the server's first requests), not counted.
                    timed(browser, eko.url, 1, None, lambda p: p.wait_for_selector(SIGNIN_NAME))

                    signed = httpx.post(f"{eko.url}/v1/auth/key", headers=eko.headers)
                    token = signed.raise_for_status().cookies["eko_session"]

                    def store_key(page: Page) -> None:
                        page.context.add_cookies(
                            [{"name": "eko_session", "value": token, "url": eko.url}]
                        )

                    rows = {
                        "baseline: GET /health": timed(
                            browser,
                            f"{eko.url}/health",
                            args.runs,
                            None,
                            lambda p: p.wait_for_load_state("load"),
                        ),
                        "sign-in form visible": timed(
                            browser,
                            eko.url,
                            args.runs,
                            None,
                            lambda p: p.wait_for_selector(SIGNIN_NAME),
                        ),
                        "signed in: 20 rooms listed": timed(
                            browser,
                            eko.url,
                            args.runs,
                            store_key,
                            lambda p: p.wait_for_selector(".room-list li:nth-child(20) a"),
                        ),
                    }
                finally:
                    browser.close()
    print(
        f"{'what (ms, ' + str(args.runs) + ' runs, cold cache)':<40} {'median':>8} "
        f"{'min':>8} {'max':>8}"
    )
    for name, times in rows.items():
        print(f"{name:<40} {statistics.median(times):8.1f} {min(times):8.1f} {max(times):8.1f}")


if __name__ == "__main__":
    main()
