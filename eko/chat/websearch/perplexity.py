"""A Perplexity-style search API: OpenAI chat completions that come back with citations.

The answer text is in choices[0].message.content; sources are in `search_results`
([{title, url, snippet?}]) when present, else `citations` (a list of URLs).
"""

from __future__ import annotations

from typing import Any

import httpx

from eko.chat.websearch.base import WebSearchError, WebSearchResult, WebSource
from eko.chat.websearch.http import answered, json_client

SYSTEM_PROMPT = (
    "Search the web and answer in a few factual sentences, in the language of the query."
)
_ANSWER_CHARS = 1500


class PerplexitySearch:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str = "sonar-pro",
        timeout_s: float = 20.0,
        transport: httpx.AsyncBaseTransport | None = None,
        name: str = "perplexity",
    ) -> None:
        self.name = name
        self.model = model
        self._client = json_client(
            base_url=base_url, api_key=api_key, timeout_s=timeout_s, transport=transport
        )

    async def search(self, query: str, *, max_results: int) -> WebSearchResult:
        payload = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": query},
            ],
        }
        response = await answered(self.name, self._client.post("/chat/completions", json=payload))
        try:
            body: Any = response.json()
            answer = str(body["choices"][0]["message"]["content"] or "").strip()
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise WebSearchError(f"{self.name}: unexpected body: {exc}") from exc
        sources = _sources(body)[:max_results]
        return WebSearchResult(
            provider=self.name,
            query=query,
            answer=answer[:_ANSWER_CHARS] or None,
            sources=tuple(sources),
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def _sources(body: dict[str, Any]) -> list[WebSource]:
    sources: list[WebSource] = []
    seen: set[str] = set()
    for item in body.get("search_results") or []:
        if isinstance(item, dict) and item.get("url") and item["url"] not in seen:
            seen.add(item["url"])
            sources.append(
                WebSource(
                    title=str(item.get("title") or item["url"]).strip(),
                    url=str(item["url"]),
                    snippet=str(item.get("snippet") or "").strip(),
                )
            )
    for url in body.get("citations") or []:
        if isinstance(url, str) and url and url not in seen:
            seen.add(url)
            sources.append(WebSource(title=WebSource(title="", url=url).domain or url, url=url))
    return sources
