"""Page load on localhost, measured in Debian's headless Chromium (not a test: run it by hand).

    .venv/bin/python -m tests.web.measure_load [--runs 10] [--requests]

Starts a real server (the browser tests' scripted model, a temp SQLite database with 20 rooms),
then times, in a fresh browser context each run (cold cache):
  sign-in form   navigation to `/` until the sign-in form is visible
  signed in      with a session cookie set, navigation to `/` until the room list shows its
                 rooms
and prints the median, min and max of each, twice: the wall time as the driver sees it
(`page.goto` until Playwright finds the element) and the time inside the page (navigation start
until a MutationObserver sees the element: without the driver's own latency). A trivial
baseline in the same run: a tiny JSON page of the same server (GET /health) loaded the same
way. With --requests, the last signed-in run's requests are listed (start, end in ms since
navigation start, bytes, * for those finished before the list showed).

The server runs in this process (its own thread), as in the browser tests: on a busy machine the
driver and the server share the interpreter. Give the load average with any figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from playwright.sync_api import Browser, Page, sync_playwright

from tests.api.live_server import running_eko
from tests.conftest import _migrate, run_isolated
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, SIGNIN_NAME
from tests.web.scripted_model import web_model

LISTED = ".room-list li:nth-child(20) a"
# Records in window.__ekoShown the page's clock when `selector` first matches a visible element.
OBSERVER = """
selector => {
  const seen = () => {
    const found = document.querySelector(selector);
    if (window.__ekoShown === undefined && found && found.getClientRects().length) {
      window.__ekoShown = performance.now();
    }
  };
  const options = { subtree: true, childList: true, attributes: true };
  new MutationObserver(seen).observe(document, options);
}
"""
REQUESTS = """
() => [performance.getEntriesByType("navigation")[0], ...performance.getEntriesByType("resource")]
  .map(e => [e.name.replace(location.origin, ""), e.startTime, e.responseEnd, e.encodedBodySize])
"""


@dataclass
class Timings:
    wall: list[float] = field(default_factory=list)  # ms, as the driver sees it
    page: list[float] = field(default_factory=list)  # ms, by the page's clock
    # The last run's requests: (path, start, end, bytes).
    requests: list[tuple[str, float, float, int]] = field(default_factory=list)


def timed(
    browser: Browser,
    url: str,
    runs: int,
    prepare: Callable[[Page], None] | None,
    selector: str | None,
) -> Timings:
    timings = Timings()
    for _ in range(runs):
        context = browser.new_context()
        page = context.new_page()
        if prepare is not None:
            prepare(page)
        if selector is not None:
            page.add_init_script(f"({OBSERVER})({selector!r})")
        start = time.perf_counter()
        page.goto(url)
        if selector is None:
            page.wait_for_load_state("load")
        else:
            page.wait_for_selector(selector)
        timings.wall.append((time.perf_counter() - start) * 1000)
        if selector is None:
            timings.page.append(
                page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
            )
        else:
            page.wait_for_function("window.__ekoShown !== undefined")
            timings.page.append(page.evaluate("window.__ekoShown"))
        page.wait_for_load_state("networkidle")
        timings.requests = [(n, s, e, b) for n, s, e, b in page.evaluate(REQUESTS)]
        context.close()
    return timings


def seed(eko_url: str, headers: dict[str, str]) -> None:
    for i in range(20):
        room = httpx.post(f"{eko_url}/v1/rooms", json={}, headers=headers).json()
        httpx.post(
            f"{eko_url}/v1/rooms/{room['id']}/messages?respond=false",
            json={"content": f"conversation {i}"},
            headers=headers,
        ).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--requests", action="store_true", help="list the requests")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'eko.db'}"
        run_isolated(_migrate(url))
        with running_eko(url, [web_model()]) as eko:
            seed(eko.url, eko.headers)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    # One warm-up (the server's first requests), not counted.
                    timed(browser, eko.url, 1, None, SIGNIN_NAME)

                    signed = httpx.post(f"{eko.url}/v1/auth/key", headers=eko.headers)
                    token = signed.raise_for_status().cookies["eko_session"]

                    def store_key(page: Page) -> None:
                        page.context.add_cookies(
                            [{"name": "eko_session", "value": token, "url": eko.url}]
                        )

                    rows = {
                        "baseline: GET /health": timed(
                            browser, f"{eko.url}/health", args.runs, None, None
                        ),
                        "sign-in form visible": timed(
                            browser, eko.url, args.runs, None, SIGNIN_NAME
                        ),
                        "signed in: 20 rooms listed": timed(
                            browser, eko.url, args.runs, store_key, LISTED
                        ),
                    }
                finally:
                    browser.close()
    report(rows, args.runs, args.requests)


def report(rows: dict[str, Timings], runs: int, requests: bool) -> None:
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'what (ms, ' + str(runs) + ' runs, cold cache)':<40} {'median':>8} {'min':>8} "
        f"{'max':>8}   {'in page':>8} {'min':>8} {'max':>8}"
    )
    for name, t in rows.items():
        print(
            f"{name:<40} {statistics.median(t.wall):8.1f} {min(t.wall):8.1f} {max(t.wall):8.1f}"
            f"   {statistics.median(t.page):8.1f} {min(t.page):8.1f} {max(t.page):8.1f}"
        )
    listed = rows["signed in: 20 rooms listed"]
    shown = listed.page[-1]
    before = [r for r in listed.requests if r[2] <= shown]
    print(
        f"last signed-in run: list shown at {shown:.1f} ms after {len(before)} requests "
        f"({sum(r[3] for r in before)} bytes); {len(listed.requests)} requests in all"
    )
    if requests:
        for name, start, end, size in sorted(listed.requests, key=lambda r: r[1]):
            print(f"{'*' if end <= shown else ' '} {start:7.1f} {end:7.1f} {size:7d}  {name}")


if __name__ == "__main__":
    main()
