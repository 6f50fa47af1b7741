"""Docs scopes on both backends: ingest replaces, search stays in scope, hard caps hold."""

from __future__ import annotations

from eko.chat.docs.service import DocsLimits, DocsService
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.store.db import Database
from eko.store.vectors import build_vector_index


def _docs(database: Database, **limits: int) -> DocsService:
    settings = Settings(database_url=database.url, _env_file=None)
    return DocsService(
        database=database,
        vectors=build_vector_index(database, settings),
        embedder=HashEmbedder(),
        limits=DocsLimits(chunk_chars=200, chunk_overlap=0, **limits),
    )


def _many(topic: str, n: int) -> str:
    return "\n\n".join(
        f"## {topic} {i}\n\n{topic} fact number {i} about {topic}." for i in range(n)
    )


async def test_caps_three_scopes_eight_per_scope_twenty_in_all(database: Database) -> None:
    docs = _docs(database)
    for scope in ("alpha", "beta", "gamma", "delta"):
        await docs.ingest(scope=scope, source="doc.md", text=_many("shared words", 12))
    hits = await docs.search("shared words fact", scopes=["alpha", "beta", "gamma", "delta"])
    assert {hit.scope for hit in hits} <= {"alpha", "beta", "gamma"}  # 3 scopes at most
    per_scope = {s: sum(1 for h in hits if h.scope == s) for s in {h.scope for h in hits}}
    assert max(per_scope.values()) <= 8
    assert len(hits) <= 20 and len(hits) == 20  # 3 × 8 = 24 found, 20 kept
    assert hits == sorted(hits, key=lambda h: -h.score)


async def test_search_never_leaves_its_scopes(database: Database) -> None:
    docs = _docs(database)
    await docs.ingest(scope="billing", source="b.md", text="# Billing\n\nRefunds take five days.")
    await docs.ingest(scope="privacy", source="p.md", text="# Privacy\n\nRefunds of data none.")
    hits = await docs.search("refunds take five days", scopes=["privacy"])
    assert hits and all(hit.scope == "privacy" for hit in hits)
    assert await docs.search("refunds", scopes=["unknown"]) == []


async def test_reingest_replaces_a_source_and_keeps_others(database: Database) -> None:
    docs = _docs(database)
    first = await docs.ingest(scope="guide", source="a.md", text=_many("apples", 3))
    await docs.ingest(scope="guide", source="b.md", text=_many("bananas", 2))
    second = await docs.ingest(scope="guide", source="a.md", text="# Apples\n\nOnly one now.")
    assert (first.chunks, second.replaced, second.chunks) == (3, 3, 1)
    [scope] = await docs.list_scopes()
    assert (scope.chunks, scope.sources) == (3, 2)
    hits = await docs.search("apples fact number", scopes=["guide"])
    assert not any("fact number" in h.content and "apples" in h.content for h in hits)
    assert await docs.delete_scope("guide") is True
    assert await docs.list_scopes() == []
    assert await docs.search("bananas", scopes=["guide"]) == []
