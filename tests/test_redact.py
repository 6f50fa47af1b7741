"""Credentials in URLs are cut short before a log line is written."""

from __future__ import annotations

from eko.redact import redact_secrets, redact_url_secrets


def test_credential_query_values_keep_four_characters() -> None:
    line = 'GET /v1/events?token=abcd1234.1700000000.deadbeef&room=r1 HTTP/1.1" 200'
    assert redact_url_secrets(line) == 'GET /v1/events?token=abcd…&room=r1 HTTP/1.1" 200'
    assert (
        redact_url_secrets("https://x.test/v1?a=1&key=sk-123456")
        == "https://x.test/v1?a=1&key=sk-1…"
    )
    assert redact_url_secrets("/v1?API_KEY=abc") == "/v1?API_KEY=…"


def test_other_text_is_untouched() -> None:
    for text in ("/v1/events", "/v1/rooms?limit=5&before=abc", "token=plain words", "monkey=1"):
        assert redact_url_secrets(text) == text


def test_the_processor_redacts_every_string_value() -> None:
    line = {"event": "WebSocket /v1/events?token=secretvalue", "path": "/p?token=xyz12", "n": 1}
    assert redact_secrets(None, "info", line) == {
        "event": "WebSocket /v1/events?token=secr…",
        "path": "/p?token=xyz1…",
        "n": 1,
    }
