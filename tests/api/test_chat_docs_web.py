"""Docs scopes and web search through the API and the engine's nodes S and C."""

from __future__ import annotations

from typing import Any

import httpx
from structlog.testing import capture_logs

from eko.chat.engine.nodes.web_search import web_search_node
from eko.chat.websearch import SearxngSearch
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, orchestrator_json, send, writer_system

GUIDE = """# Eko guide

## Billing

The Pro plan costs 12 euros per month and can be cancelled at any time from the settings.

## Privacy

Conversations are stored in your own database; nothing leaves the server.
"""


async def _ingest(h: Any, headers: dict[str, str], scope: str, source: str, text: str) -> Any:
    return await h.client.post(
        f"/v1/docs/scopes/{scope}/documents",
        headers=headers,
        json={"source": source, "text": text, "description": f"{scope} docs"},
    )


async def test_docs_api_ingest_list_search_and_permissions(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, member = await h.user("member")
        _, staff = await h.user("staff", role="staff")
        assert (await _ingest(h, member, "product", "guide.md", GUIDE)).status_code == 403
        assert (await _ingest(h, staff, "Bad Scope", "g.md", GUIDE)).status_code == 422
        assert (await _ingest(h, staff, "product", "g.md", "   ")).status_code == 422
        created = await _ingest(h, staff, "product", "guide.md", GUIDE)
        assert created.status_code == 201, created.text
        assert created.json() == {
            "scope": "product",
            "source": "guide.md",
            "chunks": 2,
            "replaced": 0,
        }
        again = (
            await _ingest(h, staff, "product", "guide.md", GUIDE + "\n## More\n\nExtra.")
        ).json()
        assert again == {"scope": "product", "source": "guide.md", "chunks": 3, "replaced": 2}
        scopes = (await h.client.get("/v1/docs/scopes", headers=member)).json()
        assert scopes == [
            {"name": "product", "description": "product docs", "chunks": 3, "sources": 1}
        ]
        hits = (
            await h.client.get(
                "/v1/docs/search",
                headers=member,
                params={"q": "Pro plan euros per month", "scope": "product"},
            )
        ).json()
        assert hits[0]["title"] == "Eko guide > Billing" and "12 euros" in hits[0]["content"]
        too_many = await h.client.get(
            "/v1/docs/search",
            headers=member,
            params=[("q", "x"), ("scope", "a"), ("scope", "b"), ("scope", "c"), ("scope", "d")],
        )
        assert too_many.status_code == 422
        assert (await h.client.delete("/v1/docs/scopes/product", headers=member)).status_code == 403
        assert (await h.client.delete("/v1/docs/scopes/product", headers=staff)).status_code == 204
        assert (await h.client.get("/v1/docs/scopes", headers=member)).json() == []


async def test_docs_chunks_reach_the_writer_first(make_harness: HarnessFactory) -> None:
    model = engine_model(
        orchestrator_json("functional_question", scope_need=True, scopes=["product"]),
        writer="Le plan Pro coûte 12 euros par mois.",
    )
    async with make_harness(providers=[model]) as h:
        _, staff = await h.user("staff", role="staff")
        await _ingest(h, staff, "product", "guide.md", GUIDE)
        _, headers, room_id = await known_user(h)
        with capture_logs() as logs:
            reply = (await send(h, room_id, headers, "Combien coûte le plan Pro par mois ?"))[
                "assistant_message"
            ]
    meta = reply["metadata"]
    assert meta["orchestrator"]["scopes_selected"] == ["product"]
    # The output contract only offers the scopes that exist.
    schema = model.requests[0].json_schema
    assert schema is not None
    scopes = schema["$defs"]["OrchestratorPayload"]["properties"]["scopes_selected"]
    assert scopes["items"]["enum"] == ["product"]
    assert meta["nodes"]["S"]["outcome"] == "ok"
    assert meta["docs"]["used"] is True and meta["docs"]["scopes"] == ["product"]
    assert meta["docs"]["chunks"][0]["source"] == "guide.md"
    system = writer_system(model)
    assert "12 euros per month" in system
    assert system.index("Documentation (use it first)") < system.index("About the user")
    events = {e["event"]: e for e in logs}
    assert events["chat.ctx.summary"]["docs_scopes_count"] == 1
    assert events["chat.docs_chunks.db"]["rows_count"] == 2
    assert events["chat.docs_chunks.db"]["chunks_count"] >= 1
    assert events["chat.response_writer.call"]["has_docs"] is True
    assert "12 euros" in events["chat.response_writer.docs_chunks"]["preview"]
    assert "product: product docs" in model.requests[0].messages[0].content


async def test_web_search_off_by_default_is_recorded_and_skipped(
    make_harness: HarnessFactory,
) -> None:
    model = engine_model(
        orchestrator_json("general_question", need_web=True, web_search_prompt="météo Lyon demain")
    )
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Il fera beau demain à Lyon ?"))[
            "assistant_message"
        ]
    web = reply["metadata"]["web"]
    assert web["needed"] is True and web["used"] is False
    assert web["query"] == "météo Lyon demain"
    assert web["outcome"] == "skipped" and "off" in web["skipped_reason"]
    assert reply["metadata"]["nodes"]["C"]["outcome"] == "skipped"
    assert "Web results" not in writer_system(model)
    assert "📌" not in reply["content"]


async def test_web_results_are_digested_with_a_sources_block(make_harness: HarnessFactory) -> None:
    def searx(request: httpx.Request) -> httpx.Response:
        assert request.url.params["q"] == "météo Lyon demain"
        return httpx.Response(
            200,
            json={
                "results": [
                    {
                        "title": "Prévisions Lyon",
                        "url": "https://www.meteo.fr/lyon",
                        "content": "Soleil et 24°C demain, voir https://www.meteo.fr/lyon",
                    },
                    {
                        "title": "Lyon weather",
                        "url": "https://weather.com/fr/lyon",
                        "content": "Sunny",
                    },
                ]
            },
        )

    model = engine_model(
        orchestrator_json("general_question", need_web=True, web_search_prompt="météo Lyon demain"),
        writer="Demain : soleil et 24°C à Lyon.\n\nSources: https://www.meteo.fr/lyon",
    )
    async with make_harness(
        providers=[model], web_search_provider="searxng", web_search_url="http://searx.test"
    ) as h:
        provider = SearxngSearch(base_url="http://searx.test", transport=httpx.MockTransport(searx))
        h.services.engine.nodes.replace(
            web_search_node(provider, max_results=5, max_chars=1500, timeout_s=5)
        )
        _, headers, room_id = await known_user(h)
        with capture_logs() as logs:
            reply = (await send(h, room_id, headers, "Il fera beau demain à Lyon ?"))[
                "assistant_message"
            ]
        await provider.aclose()
    assert reply["content"] == (
        "Demain : soleil et 24°C à Lyon.\n\n📌 Sources\n"
        "• Prévisions Lyon — meteo.fr\n• Lyon weather — weather.com"
    )
    system = writer_system(model)
    assert "Prévisions Lyon (meteo.fr): Soleil et 24°C demain" in system
    assert "https://" not in system  # the writer never sees a link
    web = reply["metadata"]["web"]
    assert web["used"] is True
    assert web["sources"] == [
        {"title": "Prévisions Lyon", "domain": "meteo.fr"},
        {"title": "Lyon weather", "domain": "weather.com"},
    ]
    assert {e["event"]: e for e in logs}["chat.response_writer.call"]["has_web"] is True


async def test_web_provider_failure_leaves_the_answer(make_harness: HarnessFactory) -> None:
    model = engine_model(
        orchestrator_json("general_question", need_web=True, web_search_prompt="bourse"),
        writer="Je n'ai pas pu vérifier en ligne.",
    )
    async with make_harness(providers=[model]) as h:
        provider = SearxngSearch(
            base_url="http://searx.test",
            transport=httpx.MockTransport(lambda r: httpx.Response(502)),
        )
        h.services.engine.nodes.replace(
            web_search_node(provider, max_results=5, max_chars=1500, timeout_s=5)
        )
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Le CAC 40 aujourd'hui ?"))["assistant_message"]
        await provider.aclose()
    assert reply["content"] == "Je n'ai pas pu vérifier en ligne."
    assert reply["metadata"]["web"]["outcome"] == "error"
    assert "HTTP 502" in reply["metadata"]["web"]["error"]


async def test_an_invented_scope_is_invalid_output(make_harness: HarnessFactory) -> None:
    model = engine_model(
        orchestrator_json("functional_question", scope_need=True, scopes=["ghost"]),
        writer="Réponse.",
    )
    async with make_harness(providers=[model]) as h:
        _, staff = await h.user("staff", role="staff")
        await _ingest(h, staff, "product", "guide.md", GUIDE)
        _, headers, room_id = await known_user(h)
        reply = (await send(h, room_id, headers, "Combien coûte Pro ?"))["assistant_message"]
    meta = reply["metadata"]
    assert meta["orchestrator"]["fallback"] == "invalid_output"
    assert meta["docs"]["used"] is False and "S" not in meta["nodes"]
