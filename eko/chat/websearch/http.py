"""What every HTTP search provider does alike: its JSON client, and turning a failed request
into WebSearchError."""

from __future__ import annotations

from collections.abc import Awaitable

import httpx

from eko.chat.websearch.base import WebSearchError


def json_client(
    *,
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    transport: httpx.AsyncBaseTransport | None,
) -> httpx.AsyncClient:
    """A client asking for JSON, with the key as a bearer token when there is one."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"),
        headers=headers,
        timeout=httpx.Timeout(timeout_s),
        transport=transport,
    )


async def answered(provider: str, request: Awaitable[httpx.Response]) -> httpx.Response:
    """The response to `request` when it is a 200; WebSearchError (naming `provider`) for a
    transport error or any other status."""
    try:
        response = await request
    except httpx.HTTPError as exc:
        raise WebSearchError(f"{provider}: {type(exc).__name__}: {exc}") from exc
    if response.status_code != 200:
        raise WebSearchError(f"{provider}: HTTP {response.status_code}")
    return response
