"""The seed's entry point POST /v1/chat/message, store-without-answer, and idempotency."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import func, select

from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store import rooms as room_repo
from eko.store import users as user_repo
from eko.store.models import LLMCall, Message, Room, User
from eko.wiring import build_services
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import engine_model, known_user, orchestrator_json, writer_requests

PROBLEM = "application/problem+json"


async def _count(h: Any, model: type, *where: Any) -> int:
    async with h.services.database.session() as session:
        query = select(func.count()).select_from(model)
        for clause in where:
            query = query.where(clause)
        return int((await session.execute(query)).scalar_one())


async def test_store_first_then_ask_for_the_answer(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Réponse unique.")
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        stored = await h.client.post(
            f"/v1/rooms/{room_id}/messages?respond=false",
            json={"content": "Une idée de dîner ?"},
            headers=headers,
        )
        assert stored.status_code == 201, stored.text
        body = stored.json()
        assert body["assistant_message"] is None
        assert model.requests == []  # storing asks the model nothing
        message_id = body["user_message"]["id"]

        payload = {"conversation_id": room_id, "user_message_id": message_id}
        first = await h.client.post("/v1/chat/message", json=payload, headers=headers)
        assert first.status_code == 200, first.text
        answer = first.json()
        assert answer["conversation_id"] == room_id
        assert answer["user_message_id"] == message_id
        assert answer["assistant_message"]["content"] == "Réponse unique."
        assert answer["assistant_message_id"] == answer["assistant_message"]["id"]
        assert answer["assistant_message"]["reply_to_id"] == message_id
        asked = len(model.requests)

        again = (await h.client.post("/v1/chat/message", json=payload, headers=headers)).json()
        assert again["assistant_message_id"] == answer["assistant_message_id"]
        assert len(model.requests) == asked  # the repeat asked the model nothing
        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
        assert [m["role"] for m in page["items"]] == ["user", "assistant"]
        me = (await h.client.get("/v1/me", headers=headers)).json()
    assert me["free_quota_used"] == 1  # counted once, when stored


async def test_concurrent_duplicate_requests_give_one_answer(make_harness: HarnessFactory) -> None:
    async def slow_writer(request: ProviderRequest) -> str:
        await asyncio.sleep(0.2)  # both requests are in flight while the first one writes
        return orchestrator_json() if request.json_schema is not None else "Une seule fois."

    model = FunctionModel(slow_writer)
    async with make_harness(providers=[model]) as h:
        _, headers, room_id = await known_user(h)
        stored = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages?respond=false",
                json={"content": "Bonjour"},
                headers=headers,
            )
        ).json()
        payload = {"conversation_id": room_id, "user_message_id": stored["user_message"]["id"]}
        first, second = await asyncio.gather(
            h.client.post("/v1/chat/message", json=payload, headers=headers),
            h.client.post("/v1/chat/message", json=payload, headers=headers),
        )
        assert first.status_code == second.status_code == 200
        assert first.json()["assistant_message_id"] == second.json()["assistant_message_id"]
        assert second.json()["assistant_message"]["content"] == "Une seule fois."
        assert await _count(h, Message, Message.role == "assistant") == 1
        assert await _count(h, LLMCall, LLMCall.purpose == "writer") == 1
    assert len(writer_requests(model)) == 1


async def test_two_workers_store_one_answer(make_harness: HarnessFactory) -> None:
    """Two processes (two ChatServices, no shared lock) answering the same message at once."""
    async with make_harness(providers=[engine_model(writer="A")]) as h:
        _, headers, room_id = await known_user(h)
        stored = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages?respond=false",
                json={"content": "Salut"},
                headers=headers,
            )
        ).json()
        other = build_services(
            Settings(
                database_url=h.settings.database_url,
                _env_file=None,
                memory_extract_enabled=False,
            ),
            providers=[engine_model(writer="B")],
            embedder=HashEmbedder(),
            database=h.services.database,
        )
        async with h.services.database.session() as session:
            message = await session.get(Message, stored["user_message"]["id"])
            room = await session.get(Room, room_id)
            assert message is not None and room is not None
            user = await session.get(User, message.sender_id)
            assert user is not None
        turn = Turn(user=user, room=room, user_message=message)
        try:
            one, two = await asyncio.gather(h.services.chat.answer(turn), other.chat.answer(turn))
        finally:
            # The second "worker" shares the database: close its own parts only.
            await other.jobs.drain()
            await other.jobs.aclose()
            await other.engine.aclose()
        assert one is not None and two is not None
        assert one.id == two.id and one.content == two.content
        assert await _count(h, Message, Message.role == "assistant") == 1


async def test_entry_point_refuses_bad_requests_and_stores_nothing(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        owner_id, owner, room_id = await known_user(h, "owner")
        _, stranger = await h.user("stranger")
        _, staff = await h.user("staff", role="staff")
        user_msg = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages?respond=false", json={"content": "hi"}, headers=owner
            )
        ).json()
        uid = user_msg["user_message"]["id"]

        async def post(body: dict[str, Any], headers: dict[str, str]) -> Any:
            return await h.client.post("/v1/chat/message", json=body, headers=headers)

        cases = [
            ({"conversation_id": "nope", "user_message_id": uid}, owner, 404, "room-not-found"),
            (
                {"conversation_id": room_id, "user_message_id": "nope"},
                owner,
                404,
                "message-not-found",
            ),
            ({"conversation_id": room_id, "user_message_id": uid}, stranger, 404, "room-not-found"),
            ({"conversation_id": room_id}, owner, 422, "validation-error"),
            (
                {"conversation_id": room_id, "user_message_id": uid, "x": 1},
                owner,
                422,
                "validation-error",
            ),
        ]
        for body, headers, status, kind in cases:
            response = await post(body, headers)
            assert response.status_code == status, (body, response.text)
            assert response.headers["content-type"].startswith(PROBLEM)
            assert response.json()["type"] == f"urn:eko:problem:{kind}"
        assert (
            await h.client.post(
                "/v1/chat/message", json={"conversation_id": room_id, "user_message_id": uid}
            )
        ).status_code == 401

        # A message of another room is not found through this conversation.
        other_room = await h.direct_room(owner)
        response = await post({"conversation_id": other_room, "user_message_id": uid}, owner)
        assert response.status_code == 404
        assert await _count(h, Message, Message.role == "assistant") == 0
        assert await _count(h, LLMCall) == 0

        # An assistant message cannot be answered; a lobby member cannot ask for another's.
        answered = await post({"conversation_id": room_id, "user_message_id": uid}, staff)
        assert answered.status_code == 200  # staff may
        reply_id = answered.json()["assistant_message_id"]
        response = await post({"conversation_id": room_id, "user_message_id": reply_id}, owner)
        assert response.status_code == 422
        assert response.json()["type"] == "urn:eko:problem:not-a-user-message"

        async with h.services.database.session() as session:
            lobby = await room_repo.create_room(
                session, kind="lobby", name="l", persona="eko", created_by=None
            )
            for public_id in (owner_id,):
                member = await user_repo.get_by_public_id(session, public_id=public_id)
                await room_repo.add_member(session, room_id=lobby.id, user_id=member.id)  # type: ignore[union-attr]
        lobby_msg = (
            await h.client.post(
                f"/v1/rooms/{lobby.id}/messages?respond=false",
                json={"content": "Eko, ça va ?"},
                headers=owner,
            )
        ).json()
        async with h.services.database.session() as session:
            stranger_user = await user_repo.get_by_name(session, display_name="stranger")
            await room_repo.add_member(session, room_id=lobby.id, user_id=stranger_user.id)  # type: ignore[union-attr]
        response = await post(
            {"conversation_id": lobby.id, "user_message_id": lobby_msg["user_message"]["id"]},
            stranger,
        )
        assert response.status_code == 403
        assert response.json()["type"] == "urn:eko:problem:not-your-message"


async def test_lobby_message_not_naming_eko_gets_no_answer(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        _, headers = await h.user()
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=headers)).json()
        quiet = (
            await h.client.post(
                f"/v1/rooms/{lobby['id']}/messages?respond=false",
                json={"content": "on mange où ?"},
                headers=headers,
            )
        ).json()
        response = await h.client.post(
            "/v1/chat/message",
            headers=headers,
            json={"conversation_id": lobby["id"], "user_message_id": quiet["user_message"]["id"]},
        )
        assert response.status_code == 200
        assert response.json()["assistant_message"] is None
        assert await _count(h, LLMCall) == 0
