"""A SearXNG instance's JSON API (`/search?q=…&format=json`; JSON must be enabled on it)."""

from __future__ import annotations

from typing import Any

import httpx

from eko.chat.websearch.base import WebSearchError, WebSearchResult, WebSource
from eko.chat.websearch.http import answered, json_client

_SNIPPET_CHARS = 400


class SearxngSearch:
    def __init__(
        self,
        *,
        base_url: str,
        timeout_s: float = 20.0,
        api_key: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        name: str = "searxng",
    ) -> None:
        self.name = name
        # api_key: for an instance behind an authenticating proxy
        self._client = json_client(
            base_url=base_url, api_key=api_key, timeout_s=timeout_s, transport=transport
        )

    async def search(self, query: str, *, max_results: int) -> WebSearchResult:
        response = await answered(
            self.name,
            self._client.get("/search", params={"q": query, "format": "json", "safesearch": 1}),
        )
        try:
            body: Any = response.json()
            results = body["results"]
            if not isinstance(results, list):
                raise TypeError("results is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise WebSearchError(f"{self.name}: unexpected body: {exc}") from exc
        sources = []
        for item in results:
            if not isinstance(item, dict) or not item.get("url"):
                continue
            sources.append(
                WebSource(
                    title=str(item.get("title") or item["url"]).strip(),
                    url=str(item["url"]),
                    snippet=str(item.get("content") or "").strip()[:_SNIPPET_CHARS],
                )
            )
            if len(sources) >= max_results:
                break
        return WebSearchResult(provider=self.name, query=query, sources=tuple(sources))

    async def aclose(self) -> None:
        await self._client.aclose()
