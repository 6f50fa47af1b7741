"""Web search: off by default; SearXNG's JSON API or a Perplexity-style chat API when set."""

from __future__ import annotations

import httpx

from eko.chat.websearch.base import WebSearchError, WebSearchProvider, WebSearchResult, WebSource
from eko.chat.websearch.perplexity import PerplexitySearch
from eko.chat.websearch.searxng import SearxngSearch
from eko.config import Settings

PERPLEXITY_DEFAULT_URL = "https://api.perplexity.ai"


def build_web_search(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> WebSearchProvider | None:
    """The configured provider, or None when web search is off."""
    api_key = (
        settings.web_search_api_key.get_secret_value() if settings.web_search_api_key else None
    )
    if settings.web_search_provider == "searxng":
        if not settings.web_search_url:
            raise ValueError("EKO_WEB_SEARCH_PROVIDER=searxng needs EKO_WEB_SEARCH_URL")
        return SearxngSearch(
            base_url=settings.web_search_url,
            timeout_s=settings.web_search_timeout_s,
            api_key=api_key,
            transport=transport,
        )
    if settings.web_search_provider == "perplexity":
        return PerplexitySearch(
            base_url=settings.web_search_url or PERPLEXITY_DEFAULT_URL,
            api_key=api_key,
            model=settings.web_search_model,
            timeout_s=settings.web_search_timeout_s,
            transport=transport,
        )
    return None


__all__ = [
    "PerplexitySearch",
    "SearxngSearch",
    "WebSearchError",
    "WebSearchProvider",
    "WebSearchResult",
    "WebSource",
    "build_web_search",
]
