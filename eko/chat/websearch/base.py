"""The web search provider contract, and the digest the response writer gets.

The writer never sees raw links: only titles and domains (the seed's rule), shown to the user
as one "📌 Sources" block of 1 to 3 bullets without URLs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit


class WebSearchError(Exception):
    """The provider could not answer (transport, HTTP status, unexpected body)."""


@dataclass(frozen=True, slots=True)
class WebSource:
    title: str
    url: str
    snippet: str = ""

    @property
    def domain(self) -> str:
        host = urlsplit(self.url).hostname or ""
        return host.removeprefix("www.")


@dataclass(frozen=True, slots=True)
class WebSearchResult:
    provider: str
    query: str
    # A synthesized answer (Perplexity-style providers), when the provider gives one.
    answer: str | None = None
    sources: tuple[WebSource, ...] = field(default=())


class WebSearchProvider(Protocol):
    name: str

    async def search(self, query: str, *, max_results: int) -> WebSearchResult: ...

    async def aclose(self) -> None: ...
