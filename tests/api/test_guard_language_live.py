"""An entry answers only questions in its own language (issue 36), through a real server over
real sockets: an English entry is not served to the French translation of its question (the
reply, made by the model instead, says why in its metadata), and is served to the English
question. Thresholds are loose enough that the cosine alone would serve the French question,
as the French threshold did with English entries before the language gate."""

from __future__ import annotations

from typing import Any

import httpx

from tests.guard.test_api import counting_model

from .live_server import LiveEko, running_eko

EN_ENTRY = "How do I reset the Docker cache on Ubuntu?"
ANSWER = "Run docker builder prune, then restart the Docker service."
FR_TRANSLATION = "Comment réinitialiser le cache Docker sur Ubuntu ?"
LOOSE = {"en": 0.2, "fr": 0.2, "und": 0.2}


def _reply(eko: LiveEko, question: str) -> dict[str, Any]:
    """The assistant's reply to `question` in a new direct room."""
    room = httpx.post(f"{eko.url}/v1/rooms", json={"kind": "direct"}, headers=eko.headers)
    assert room.status_code == 201, room.text
    posted = httpx.post(
        f"{eko.url}/v1/rooms/{room.json()['id']}/messages",
        json={"content": question},
        headers=eko.headers,
        timeout=30,
    )
    assert posted.status_code == 201, posted.text
    reply: dict[str, Any] = posted.json()["assistant_message"]
    return reply


def test_an_english_entry_is_not_served_in_french_and_the_reply_says_why(
    database_url: str,
) -> None:
    with running_eko(database_url, [counting_model()], guard_thresholds=LOOSE) as eko:
        staff = {"Authorization": f"Bearer {eko.staff_key}"}
        created = httpx.post(
            f"{eko.url}/v1/staff/memory",
            json={"question": EN_ENTRY, "answer": ANSWER},
            headers=staff,
        )
        assert created.status_code == 201, created.text
        entry_id = created.json()["id"]

        french = _reply(eko, FR_TRANSLATION)
        assert french["type"] != "cached_response"
        assert french["content"].startswith("Model answer number")
        refused = french["metadata"]["memory_guard"]
        assert refused["served"] is False
        assert refused["reason"] == "language"
        assert refused["language"] == "fr"
        assert refused["nearest"]["entry_id"] == entry_id
        assert refused["nearest"]["check"]["details"]["language"] == {
            "question": "fr",
            "entry": "en",
        }

        english = _reply(eko, EN_ENTRY)
        assert english["type"] == "cached_response"
        assert english["content"] == ANSWER
        assert english["metadata"]["memory_guard"]["entry_id"] == entry_id
