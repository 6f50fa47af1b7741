"""Secrets in URLs are never logged in full: the value of a credential query parameter
(`?token=`, `access_token`, `api_key`, `key`) keeps its first characters and loses the rest.

Browsers authenticate `/v1/events` with `?token=` (they cannot set headers on an EventSource or
a WebSocket), and uvicorn logs the path with its query string (the WebSocket lines of
`uvicorn.error`, and `uvicorn.access` when it is on); clients of providers may log URLs that
carry a key. `redact_secrets` is a log processor applied to every line (eko.logging).
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

# Characters of a secret kept in the log: enough to tell two tokens apart, not to use one.
KEPT_CHARS = 4
MARK = "…"

_CREDENTIAL = re.compile(
    r"(?P<name>[?&;](?:token|access_token|api_key|apikey|key)=)(?P<value>[^&;\s\"'#<>]+)",
    re.IGNORECASE,
)


def _shorten(match: re.Match[str]) -> str:
    value = match["value"]
    if len(value) <= KEPT_CHARS:
        return match["name"] + MARK
    return match["name"] + value[:KEPT_CHARS] + MARK


def redact_url_secrets(text: str) -> str:
    """`text` with the value of every credential query parameter cut to KEPT_CHARS + "…"."""
    if "=" not in text:
        return text
    return _CREDENTIAL.sub(_shorten, text)


def redact_secrets(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> Any:
    """A structlog processor: redact_url_secrets on every string value of the line."""
    for name, value in event_dict.items():
        if isinstance(value, str):
            event_dict[name] = redact_url_secrets(value)
    return event_dict
