"""An entry answers only questions in its own language (issue 36): a French question is never
served an English entry and the other way round, whatever the thresholds, unless staff marked
the entry multilingual. Through the HTTP API, with thresholds loose enough that the cosine
alone would serve every one of these pairs (as the French 0.95 did with English candidates)."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import HarnessFactory
from tests.guard.test_api import ask, counting_model

EN_ENTRY = "How do I reset the Docker cache on Ubuntu?"
FR_ENTRY = "Comment vider le cache Docker sur Ubuntu ?"
FR_QUESTION = "Comment vider le cache de Docker sous Ubuntu ?"
EN_QUESTION = "Docker cache reset on Ubuntu, how do I do it?"
LOOSE = {"en": 0.25, "fr": 0.25, "und": 0.25}


async def _entry(h: Any, staff: dict[str, str], question: str, **extra: Any) -> str:
    created = await h.client.post(
        "/v1/staff/memory",
        json={"question": question, "answer": f"Answer to: {question}", **extra},
        headers=staff,
    )
    assert created.status_code == 201, created.text
    entry_id: str = created.json()["id"]
    return entry_id


async def _served(h: Any, headers: dict[str, str], question: str) -> str | None:
    """The entry that answered `question` in a new room, or None when the model did."""
    room = await h.direct_room(headers)
    reply = (await ask(h, headers, room, question))["assistant_message"]
    if reply["type"] != "cached_response":
        return None
    entry_id: str = reply["metadata"]["memory_guard"]["entry_id"]
    return entry_id


async def _delete(h: Any, staff: dict[str, str], entry_id: str) -> None:
    response = await h.client.delete(f"/v1/staff/memory/{entry_id}", headers=staff)
    assert response.status_code in (200, 204), response.text


async def test_a_french_question_is_never_served_an_english_entry(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()], guard_thresholds=LOOSE) as h:
        _, headers = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        english = await _entry(h, staff, EN_ENTRY)
        assert await _served(h, headers, FR_QUESTION) is None
        # The same entry still answers its own language.
        assert await _served(h, headers, EN_QUESTION) == english


async def test_an_english_question_is_never_served_a_french_entry(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[counting_model()], guard_thresholds=LOOSE) as h:
        _, headers = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        french = await _entry(h, staff, FR_ENTRY)
        assert await _served(h, headers, EN_QUESTION) is None
        assert await _served(h, headers, FR_QUESTION) == french


async def test_a_multilingual_entry_answers_every_language(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[counting_model()], guard_thresholds=LOOSE) as h:
        _, headers = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        english = await _entry(h, staff, EN_ENTRY, multilingual=True)
        assert await _served(h, headers, FR_QUESTION) == english
        await _delete(h, staff, english)
        plain = await _entry(h, staff, EN_ENTRY)
        assert await _served(h, headers, FR_QUESTION) is None
        search = await h.client.post(
            "/v1/staff/memory/search", json={"question": FR_QUESTION}, headers=staff
        )
        [candidate] = [c for c in search.json()["candidates"] if c["entry"]["id"] == plain]
        assert candidate["check"]["failed"] == ["language"]
