"""The foundation's API contract: rooms, messages, the reply path, auth, limits, problem+json."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel, OpenAICompatProvider
from eko.store.models import LLMCall, Message, User
from tests.api.conftest import HarnessFactory

PROBLEM = "application/problem+json"


async def _count(h: Any, model: type) -> int:
    async with h.services.database.session() as session:
        return int((await session.execute(select(func.count()).select_from(model))).scalar_one())


async def test_health_has_seed_shape_and_parts(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        body = (await h.client.get("/health")).json()
    assert body["status"] == "healthy"
    assert {"status", "environment", "version", "timestamp", "database", "model"} <= body.keys()
    assert body["database"]["status"] == "ok" and body["database"]["migrated"] is True
    assert body["model"]["providers"][0]["name"] == "function"


async def test_post_message_stores_both_and_returns_reply(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "Salut !"}, headers=headers
        )
        assert response.status_code == 201, response.text
        body = response.json()
        assert body["user_message"]["content"] == "Salut !"
        reply = body["assistant_message"]
        assert reply["content"] == "Bonjour, je suis Eko."
        assert reply["role"] == "assistant" and reply["reply_to_id"] == body["user_message"]["id"]
        assert reply["metadata"]["provider"] == "function"
        assert "input_tokens" in reply["metadata"]["usage"]
        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
        assert [m["role"] for m in page["items"]] == ["user", "assistant"]
        assert [m["seq"] for m in page["items"]] == [1, 2]
        calls = (await h.client.get(f"/v1/rooms/{room_id}/llm-calls", headers=headers)).json()
        # The chat engine makes one orchestrator call and one writer call. This constant model
        # does not answer JSON: the orchestrator's call is invalid (re-asked once), and the
        # deterministic fallback routes the turn.
        assert [(c["purpose"], c["outcome"]) for c in calls] == [
            ("orchestrator", "invalid"),
            ("orchestrator", "invalid"),
            ("writer", "ok"),
        ]
        assert reply["metadata"]["orchestrator"]["fallback"] == "invalid_output"
        assert {c["message_id"] for c in calls} == {body["user_message"]["id"]}


async def test_history_reaches_the_model_in_order(make_harness: HarnessFactory) -> None:
    model = FunctionModel(lambda request: f"seen {len(request.messages)}")
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user("bob")
        room_id = await h.direct_room(headers, persona="lisa")
        for text in ("un", "deux"):
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": text}, headers=headers
            )
    last = model.requests[-1].messages
    assert last[0].role == "system" and "Lisa" in last[0].content
    assert [(m.role, m.content) for m in last[1:]] == [
        ("user", "un"),
        ("assistant", "seen 2"),
        ("user", "deux"),
    ]
    # A direct room sends no display names to the writer (only the lobby does, where several
    # people speak): an answer that never saw the user's name can be shared by the guard.
    assert last[1].name is None


async def test_fallback_when_first_provider_refuses_connection(
    make_harness: HarnessFactory,
) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    down = OpenAICompatProvider(
        name="primary",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        transport=httpx.MockTransport(refuse),
    )
    backup = FunctionModel.constant("from the fallback", name="backup")
    async with make_harness(providers=[down, backup]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        body = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "hi"}, headers=headers
            )
        ).json()
        assert body["assistant_message"]["content"] == "from the fallback"
        assert body["assistant_message"]["metadata"]["fallback_used"] is True
        calls = (await h.client.get(f"/v1/rooms/{room_id}/llm-calls", headers=headers)).json()
    # A refused connection opens the primary's circuit at once: the orchestrator's call found
    # it down, and the writer went straight to the backup without a second wait.
    assert [
        (c["purpose"], c["provider"], c["outcome"]) for c in calls if c["provider"] == "primary"
    ] == [("orchestrator", "primary", "error")]
    writer_calls = [c for c in calls if c["purpose"] == "writer"]
    assert [(c["provider"], c["outcome"]) for c in writer_calls] == [("backup", "fallback")]


async def test_fallback_when_first_provider_returns_garbage(make_harness: HarnessFactory) -> None:
    garbage = OpenAICompatProvider(
        name="primary",
        base_url="http://llm.test/v1",
        model="m",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, text="<html>oops")),
    )
    backup = FunctionModel.constant("clean answer", name="backup")
    async with make_harness(providers=[garbage, backup]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        body = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "hi"}, headers=headers
            )
        ).json()
        assert body["assistant_message"]["content"] == "clean answer"
        async with h.services.database.session() as session:
            writer_calls = (
                await session.execute(
                    select(func.count()).select_from(LLMCall).where(LLMCall.purpose == "writer")
                )
            ).scalar_one()
        assert writer_calls == 2


async def test_all_providers_down_gives_safe_answer(make_harness: HarnessFactory) -> None:
    down = FunctionModel.scripted(ProviderUnavailable("only", "down"), name="only")
    async with make_harness(providers=[down]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        response = await h.client.post(
            f"/v1/rooms/{room_id}/messages", json={"content": "hi"}, headers=headers
        )
    assert response.status_code == 201
    reply = response.json()["assistant_message"]
    assert reply["content"].strip()
    assert reply["metadata"]["fallback"] == "llm_error"


async def test_same_client_message_id_is_stored_once(make_harness: HarnessFactory) -> None:
    model = FunctionModel.constant("once")
    async with make_harness(providers=[model]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        payload = {"content": "hello", "client_message_id": "c-1"}
        first = (
            await h.client.post(f"/v1/rooms/{room_id}/messages", json=payload, headers=headers)
        ).json()
        asked = len(model.requests)
        second = (
            await h.client.post(f"/v1/rooms/{room_id}/messages", json=payload, headers=headers)
        ).json()
        assert second["created"] is False
        assert second["user_message"]["id"] == first["user_message"]["id"]
        assert second["assistant_message"]["id"] == first["assistant_message"]["id"]
        assert await _count(h, Message) == 2
    assert asked > 0 and len(model.requests) == asked  # the repeat asked the model nothing


async def test_lobby_answers_only_when_named(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        response = await h.client.post(
            "/v1/rooms", json={"kind": "lobby", "name": "lobby"}, headers=headers
        )
        room_id = response.json()["id"]
        quiet = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "on mange où ?"}, headers=headers
            )
        ).json()
        named = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages",
                json={"content": "Eko, une idée ?"},
                headers=headers,
            )
        ).json()
    assert quiet["assistant_message"] is None
    assert named["assistant_message"] is not None


async def test_pagination_walks_back_in_order(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        for i in range(5):
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": f"m{i}"}, headers=headers
            )
        seen: list[int] = []
        before = None
        while True:
            params = {"limit": 3} | ({"before": before} if before else {})
            page = (
                await h.client.get(f"/v1/rooms/{room_id}/messages", params=params, headers=headers)
            ).json()
            seen = [m["seq"] for m in page["items"]] + seen
            before = page["next_before"]
            if before is None:
                break
    assert seen == list(range(1, 11))


async def test_quota_counts_user_messages(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        for _ in range(3):
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "x"}, headers=headers
            )
        me = (await h.client.get("/v1/me", headers=headers)).json()
    assert me["free_quota_used"] == 3


# --- bad input: the right 4xx, problem+json, and nothing stored ---------------------------


async def _assert_problem(response: httpx.Response, status: int, kind: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body = response.json()
    assert body["type"] == f"urn:eko:problem:{kind}" and body["status"] == status


async def test_bad_input_gets_4xx_and_stores_nothing(make_harness: HarnessFactory) -> None:
    async with make_harness(max_message_chars=50) as h:
        owner_id, owner = await h.user("owner")
        _, intruder = await h.user("intruder")
        room_id = await h.direct_room(owner)
        url = f"/v1/rooms/{room_id}/messages"

        await _assert_problem(
            await h.client.post(url, json={"content": "x" * 51}, headers=owner),
            413,
            "message-too-long",
        )
        await _assert_problem(
            await h.client.post(url, json={"content": "hi"}), 401, "missing-api-key"
        )
        await _assert_problem(
            await h.client.post(
                url, json={"content": "hi"}, headers={"Authorization": "Bearer eko_wrong"}
            ),
            401,
            "invalid-api-key",
        )
        await _assert_problem(
            await h.client.post(url, json={"content": "hi"}, headers=intruder),
            404,
            "room-not-found",
        )
        await _assert_problem(
            await h.client.get(f"/v1/rooms/{room_id}", headers=intruder), 404, "room-not-found"
        )
        await _assert_problem(
            await h.client.post("/v1/rooms/nope/messages", json={"content": "hi"}, headers=owner),
            404,
            "room-not-found",
        )
        await _assert_problem(
            await h.client.post(url, json={"content": "   "}, headers=owner), 422, "empty-message"
        )
        await _assert_problem(
            await h.client.post(url, json={"text": "hi"}, headers=owner), 422, "validation-error"
        )
        await _assert_problem(
            await h.client.post(
                url,
                content=b'{"content": "' + b"y" * 300_000 + b'"}',
                headers={**owner, "content-type": "application/json"},
            ),
            413,
            "payload-too-large",
        )
        await _assert_problem(
            await h.client.post(
                "/v1/rooms", json={"kind": "direct", "persona": "nobody"}, headers=owner
            ),
            422,
            "unknown-persona",
        )

        assert await _count(h, Message) == 0
        assert await _count(h, LLMCall) == 0
        async with h.services.database.session() as session:
            used = (
                await session.execute(
                    select(User.free_quota_used).where(User.public_id == owner_id)
                )
            ).scalar_one()
        assert used == 0


async def test_staff_only_routes(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        _, member = await h.user("m")
        _, staff = await h.user("s", role="staff")
        await _assert_problem(await h.client.get("/v1/users", headers=member), 403, "staff-only")
        created = await h.client.post("/v1/users", json={"display_name": "new"}, headers=staff)
        assert created.status_code == 201
        key = created.json()["api_key"]
        me = await h.client.get("/v1/me", headers={"Authorization": f"Bearer {key}"})
        assert me.json()["display_name"] == "new"


async def test_lobbies_created_without_a_name_have_distinct_titles(
    make_harness: HarnessFactory,
) -> None:
    """Issue #37: every lobby was titled "Camille & Eko"."""
    async with make_harness() as h:
        _, headers = await h.user("Camille")
        for _ in range(2):
            created = await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)
            assert created.status_code == 201
        direct = await h.client.post("/v1/rooms", json={"kind": "direct"}, headers=headers)
        listed = (await h.client.get("/v1/rooms", headers=headers)).json()
    titles = {room["id"]: room["title"] for room in listed}
    lobbies = [room["title"] for room in listed if room["kind"] == "lobby"]
    assert sorted(lobbies) == ["Camille & Eko #1", "Camille & Eko #2"]
    assert titles[direct.json()["id"]] == "Camille & Eko"  # titled by its first message later
