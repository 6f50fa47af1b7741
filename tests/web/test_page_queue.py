"""The pending bubble says where a reply waits in the local model's line (issue #34)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, expect

from tests.api.live_server import running_eko
from tests.api.test_local_queue_live import Poster, new_room, wait_for
from tests.conftest import _migrate, run_isolated
from tests.llm.slow_llama import ANSWER, SlowLlama, slow_local
from tests.web.conftest import PageFactory, WebEko
from tests.web.test_chat_page import new_conversation, send


def test_a_queued_reply_shows_its_place_then_the_answer(browser: Browser, tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'eko.db'}"
    run_isolated(_migrate(url))
    llama = SlowLlama(delay=6.0)  # someone else's call holds the model meanwhile
    local = slow_local(tmp_path, llama)
    with running_eko(url, [local], assistant_name="Eko") as eko:
        pages = PageFactory(browser, WebEko(eko.url, eko.key, eko.staff_key))
        try:
            page = pages()
            new_conversation(page)
            other = Poster(eko, new_room(eko), "Une longue question")
            other.start()
            wait_for(lambda: local.gate.held)
            llama.delay = 0.3
            send(page, "Bonjour")

            reply = page.locator(".messages [data-role=assistant]").first
            queued = reply.locator("[data-testid=queued]")
            expect(queued).to_contain_text("Queued, position 1, about")
            expect(reply.locator(".msg-body")).to_have_text(ANSWER, timeout=30_000)
            expect(queued).to_have_count(0)
            other.join(30)
            assert not pages.unexpected_errors()
        finally:
            pages.finish("test_a_queued_reply_shows_its_place_then_the_answer")
