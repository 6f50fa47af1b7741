"""A PDF attached in the page is read by the model when asked about (through the live server)."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.pdf_file import pdf_bytes
from tests.web.conftest import PageFactory
from tests.web.test_chat_page import new_conversation, send

PDF = "application/pdf"


def test_a_pdf_attached_in_the_page_is_what_the_model_reads(new_page: PageFactory) -> None:
    # The refused uploads below are 4xx answers, which Chromium reports on the console.
    new_page.allow_console_errors(r"status of 41[35]|status of 422")
    page = new_page()
    new_conversation(page)
    send(page, "Que dit la pièce jointe ?")
    replies = page.locator(".messages [data-role=assistant]")
    expect(replies.nth(0)).to_contain_text("Pièce jointe lue : aucune.")

    status = page.locator("[data-testid=attachments-status]")
    chips = page.locator("[data-testid=attachment-chip]")
    picker = page.locator("[data-testid=attach-input]")
    expect(page.locator("[data-testid=attach]")).to_be_visible()
    picker.set_input_files({"name": "photo.png", "mimeType": "image/png", "buffer": b"\x89PNG"})
    expect(status).to_have_text(
        "photo.png cannot be attached: only text (.txt), Markdown (.md) and PDF files."
    )
    expect(chips).to_have_count(0)

    report = pdf_bytes("Rapport annuel.", "Le mot de passe du phare est PIECE-GOELAND.")
    picker.set_input_files({"name": "rapport.pdf", "mimeType": PDF, "buffer": report})
    expect(status).to_have_text("rapport.pdf attached: Eko reads it to answer here.")
    expect(chips).to_have_count(1)
    expect(chips.nth(0)).to_contain_text("rapport.pdf")

    send(page, "Et maintenant, que dit la pièce jointe ?")
    expect(replies.nth(1)).to_contain_text("Pièce jointe lue : PIECE-GOELAND.")

    # Stored with the conversation: a reload shows the file; × removes it.
    page.reload()
    page.wait_for_selector("[data-testid=room-list][data-loaded]")
    expect(chips).to_have_count(1)
    chips.nth(0).get_by_role("button").click()
    expect(chips).to_have_count(0)
    expect(status).to_have_text("rapport.pdf removed.")
    send(page, "Plus de pièce jointe ?")
    expect(replies.nth(2)).to_contain_text("Pièce jointe lue : aucune.")


def test_an_unreadable_pdf_is_refused_in_the_pages_language(new_page: PageFactory) -> None:
    new_page.allow_console_errors(r"status of 422")
    page = new_page(locale="fr-FR")
    new_conversation(page)
    page.locator("[data-testid=attach-input]").set_input_files(
        {"name": "scan.pdf", "mimeType": PDF, "buffer": pdf_bytes("")}
    )
    expect(page.locator("[data-testid=attachments-status]")).to_have_text(
        "Aucun texte n’a pu être lu dans scan.pdf (un fichier scanné, abîmé ou protégé ?)."
    )
    expect(page.locator("[data-testid=attachment-chip]")).to_have_count(0)
    expect(page.locator("[data-testid=attach]")).to_have_attribute(
        "aria-label", "Joindre un fichier (texte, Markdown ou PDF)"
    )


def test_a_file_attached_in_a_lobby_is_shown_to_its_members(new_page: PageFactory) -> None:
    eko = new_page.eko
    created = httpx.post(
        f"{eko.url}/v1/rooms",
        json={"kind": "lobby", "name": "Atelier"},
        headers={"Authorization": f"Bearer {eko.key}"},
        timeout=10,
    )
    created.raise_for_status()
    room_id = created.json()["id"]
    page = new_page()
    page.evaluate("id => { location.hash = `#/lobby/${id}`; }", room_id)
    page.wait_for_selector(f"[data-testid=lobby][data-room-id='{room_id}'][data-ready=true]")
    page.locator("[data-testid=lobby-composer] [data-testid=attach-input]").set_input_files(
        {"name": "plan.md", "mimeType": "text/markdown", "buffer": b"# Plan\n\nPIECE-ATELIER."}
    )
    chips = page.locator("[data-testid=attachment-chip]")
    expect(chips).to_have_count(1)
    expect(chips.nth(0)).to_contain_text("plan.md")
    listed = httpx.get(
        f"{eko.url}/v1/rooms/{room_id}/attachments",
        headers={"Authorization": f"Bearer {eko.key}"},
        timeout=10,
    ).json()
    assert [a["filename"] for a in listed] == ["plan.md"]
