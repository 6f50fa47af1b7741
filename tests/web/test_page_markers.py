"""Answers that did not come from a fresh model call are marked as such in the page: one served
from the memory guard's cache, and the paywall answer once the free quota is used."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.web.conftest import PageFactory
from tests.web.test_chat_page import new_conversation, send


def test_a_cached_answer_is_marked(new_page: PageFactory) -> None:
    eko = new_page.eko
    question = "Quelle est la hauteur de la tour Eiffel ?"
    written = httpx.post(
        f"{eko.url}/v1/staff/memory",
        json={"question": question, "answer": "Elle mesure 330 mètres."},
        headers={"Authorization": f"Bearer {eko.staff_key}"},
        timeout=30,
    )
    assert written.status_code == 201, written.text
    page = new_page(key=eko.new_user_key("Curieux"))
    new_conversation(page)
    send(page, question)
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply).to_contain_text("330 mètres")
    expect(reply.locator(".badge-cache")).to_have_text("cached answer")
    expect(reply.locator(".badge-fallback")).to_have_count(0)


def test_the_paywall_answer_is_marked(new_page: PageFactory) -> None:
    eko = new_page.eko
    key = eko.new_user_key("Gratuit", is_pro=False)
    headers = {"Authorization": f"Bearer {key}"}
    room_id = httpx.post(f"{eko.url}/v1/rooms", json={}, headers=headers).json()["id"]
    me = httpx.get(f"{eko.url}/v1/me", headers=headers).json()
    for i in range(int(me["free_quota_limit"])):  # the free messages, stored without answers
        httpx.post(
            f"{eko.url}/v1/rooms/{room_id}/messages?respond=false",
            json={"content": f"message gratuit {i}"},
            headers=headers,
            timeout=30,
        ).raise_for_status()
    page = new_page(key=key)
    page.goto(f"/#/chat/{room_id}")
    send(page, "Encore une question ?")
    reply = page.locator(".messages [data-role=assistant]")
    expect(reply).to_have_attribute("data-state", "done")
    expect(reply.locator(".badge-paywall")).to_have_text("quota reached")
