"""Export a conversation from the list: Markdown and JSON downloads."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

from tests.web.conftest import PageFactory, WebEko
from tests.web.test_chat_page import new_conversation, send


def test_export_downloads_markdown_and_json(new_page: PageFactory, live_eko: WebEko) -> None:
    page = new_page()
    room_id = new_conversation(page)
    send(page, "Un export, merci")
    expect(page.locator(".messages [data-role=assistant]")).to_have_attribute("data-state", "done")

    row = page.locator(f"[data-testid=room-list] [data-room-id='{room_id}']")
    row.get_by_role("button", name="Export conversation").click()
    dialog = page.locator("[data-testid=export-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Export “Un export, merci”")
    with page.expect_download() as md_download:
        dialog.locator("[data-testid=export-md]").click()
    md = md_download.value
    assert md.suggested_filename == "un-export-merci.md"
    text = Path(md.path()).read_text("utf-8")
    assert text.startswith("# Un export, merci\n")
    assert "Vous avez dit : Un export, merci" in text
    expect(dialog).to_be_hidden()

    row.get_by_role("button", name="Export conversation").click()
    with page.expect_download() as json_download:
        dialog.locator("[data-testid=export-json]").click()
    body = json.loads(Path(json_download.value.path()).read_text("utf-8"))
    assert body["room"]["id"] == room_id
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][0]["content"] == "Un export, merci"
