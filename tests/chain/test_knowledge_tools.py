"""The docs and web tools: docs scopes searched through DocsService, web only when configured."""

from __future__ import annotations

from eko.chain.tools import ToolContext, build_tools
from eko.chat.docs.attachments import Attachments
from eko.chat.docs.service import DocsService
from eko.chat.websearch.base import WebSearchResult, WebSource
from eko.embed.hashing import HashEmbedder
from eko.store import rooms as room_repo
from eko.store.db import Database
from eko.store.models import Room, User
from tests.memory.conftest import make_kit


def _ctx() -> ToolContext:
    return ToolContext(user=User(id=1, public_id="p"), room=Room(id="r", kind="direct"))


class FakeWeb:
    name = "fake"

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def search(self, query: str, *, max_results: int) -> WebSearchResult:
        self.queries.append(query)
        return WebSearchResult(
            provider="fake",
            query=query,
            answer="Paris",
            sources=(WebSource("Capital", "https://www.example.org/paris", "Paris is…"),),
        )

    async def aclose(self) -> None:
        pass


async def test_web_search_only_when_configured() -> None:
    assert "web_search" not in build_tools().names
    web = FakeWeb()
    tools = build_tools(web=web, web_max_results=3)
    result = await tools.call(_ctx(), "web_search", {"query": "capital of France"})
    assert result.ok and web.queries == ["capital of France"]
    assert result.result == {
        "answer": "Paris",
        "sources": [{"title": "Capital", "domain": "example.org", "snippet": "Paris is…"}],
    }


async def test_search_docs_in_every_scope_or_one(database: Database) -> None:
    kit = make_kit(database)
    docs = DocsService(database=database, vectors=kit.vectors, embedder=HashEmbedder())
    await docs.ingest(scope="product", source="faq.md", text="# FAQ\n\nEko answers in French.")
    await docs.ingest(scope="legal", source="cgu.md", text="# CGU\n\nNo refunds after 30 days.")
    tools = build_tools(docs=docs)
    everywhere = await tools.call(_ctx(), "search_docs", {"query": "refunds after 30 days"})
    assert everywhere.ok and everywhere.result[0]["scope"] == "legal"
    one = await tools.call(_ctx(), "search_docs", {"query": "refunds", "scope": "product"})
    assert {hit["scope"] for hit in one.result} == {"product"}


async def test_search_docs_reads_the_callers_room_files_and_no_other_rooms(
    database: Database,
) -> None:
    kit = make_kit(database)
    docs = DocsService(database=database, vectors=kit.vectors, embedder=HashEmbedder())
    attachments = Attachments(database=database, docs=docs)
    async with database.session() as session:
        mine = await room_repo.create_room(
            session, kind="direct", name="a", persona="eko", created_by=None
        )
        other = await room_repo.create_room(
            session, kind="direct", name="b", persona="eko", created_by=None
        )
    await attachments.add(
        room_id=mine.id,
        filename="house.txt",
        content_type="text/plain",
        data=b"The attic key is under the blue flower pot.",
        uploaded_by=None,
    )
    tools = build_tools(docs=docs)
    user = User(id=1, public_id="p")
    query = {"query": "where is the attic key"}
    found = await tools.call(ToolContext(user=user, room=mine), "search_docs", query)
    assert found.ok and found.result[0]["scope"] == f"room.{mine.id}"
    assert found.result[0]["source"] == "house.txt"
    elsewhere = await tools.call(ToolContext(user=user, room=other), "search_docs", query)
    assert elsewhere.ok and elsewhere.result == []
    # Naming the other room's scope does not open it either.
    forced = await tools.call(
        ToolContext(user=user, room=other),
        "search_docs",
        {**query, "scope": f"room.{mine.id}"},
    )
    assert forced.ok and forced.result == []
