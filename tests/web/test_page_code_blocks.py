"""Code blocks in replies: highlighted (vendored highlight.js, sanitized again), with a copy
button that puts exactly the code in the clipboard."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import PageFactory
from tests.web.test_chat_page import new_conversation, send

CODE = "print('<b>bonjour</b>')"


def test_code_block_is_highlighted_and_copied(new_page: PageFactory) -> None:
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    new_conversation(page)
    send(page, "Un bloc de code en markdown")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    code = reply.locator("pre code")
    expect(code).to_have_attribute("data-language", "python")
    expect(code).to_have_class("language-python hljs")
    # Highlighted: the call and the string are marked, the text is unchanged, the HTML inert.
    expect(code.locator("span.hljs-built_in")).to_have_text("print")
    expect(code.locator("span.hljs-string")).to_have_text("'<b>bonjour</b>'")
    expect(code).to_have_text(CODE)
    assert code.locator("b").count() == 0

    copy = reply.get_by_role("button", name="Copy code")
    copy.click()
    expect(copy).to_have_text("✓")
    assert page.evaluate("navigator.clipboard.readText()").strip() == CODE
