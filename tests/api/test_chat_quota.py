"""Quota v1: lifetime count, states, paywall without any model call, GET /v1/quota."""

from __future__ import annotations

from eko.llm.providers import FunctionModel
from tests.api.conftest import HarnessFactory
from tests.chat.helpers import calls_for, engine_model, known_user, send, writer_system

QUOTA_KEYS = {
    "public_user_id",
    "is_pro",
    "free_quota_used",
    "free_quota_limit",
    "state",
    "paywall_should_show",
}


async def test_quota_route_has_the_seed_shape_and_is_private(make_harness: HarnessFactory) -> None:
    async with make_harness(providers=[engine_model()]) as h:
        alice_id, alice, room_id = await known_user(h, "alice")
        bob_id, bob = await h.user("bob")
        _, staff = await h.user("staff", role="staff")
        for _ in range(2):
            await send(h, room_id, alice, "Salut")
        body = (await h.client.get(f"/v1/quota/{alice_id}", headers=alice)).json()
        assert set(body) == QUOTA_KEYS
        assert body == {
            "public_user_id": alice_id,
            "is_pro": False,
            "free_quota_used": 2,
            "free_quota_limit": 8,
            "state": "normal",
            "paywall_should_show": False,
        }
        assert (await h.client.get(f"/v1/quota/{alice_id}", headers=staff)).status_code == 200
        hidden = await h.client.get(f"/v1/quota/{alice_id}", headers=bob)
        assert hidden.status_code == 404
        assert hidden.json()["type"] == "urn:eko:problem:user-not-found"
        assert (await h.client.get("/v1/quota/nobody", headers=staff)).status_code == 404
        assert (await h.client.get(f"/v1/quota/{bob_id}")).status_code == 401


async def test_seventh_message_warns_and_eighth_gets_the_paywall(
    make_harness: HarnessFactory,
) -> None:
    model = engine_model(writer="Réponse.")
    async with make_harness(providers=[model]) as h:
        public_id, headers, room_id = await known_user(h)
        replies = [await send(h, room_id, headers, f"message {i}") for i in range(1, 8)]
        states = [r["assistant_message"]["metadata"]["quota"]["state"] for r in replies]
        assert states == ["normal"] * 6 + ["warn_last_free"]
        assert "last free message" in writer_system(model)
        assert "last free message" not in writer_system(model, -2)
        asked = len(model.requests)

        eighth = await send(h, room_id, headers, "message 8")
        reply = eighth["assistant_message"]
        assert reply["type"] == "paywall"
        assert reply["content"] == h.services.prompts.text("quota/paywall.md")
        assert reply["metadata"]["answered_by"] == "quota_paywall"
        assert reply["metadata"]["quota"]["state"] == "blocked"
        assert len(model.requests) == asked  # no model call at all
        assert await calls_for(h, room_id, headers, eighth["user_message"]["id"]) == []

        ninth = await send(h, room_id, headers, "message 9")
        assert ninth["assistant_message"]["type"] == "paywall"
        quota = (await h.client.get(f"/v1/quota/{public_id}", headers=headers)).json()
    assert quota["free_quota_used"] == 9  # lifetime count, never reset
    assert quota["state"] == "blocked" and quota["paywall_should_show"] is True
    assert len(model.requests) == asked


async def test_pro_users_are_never_blocked(make_harness: HarnessFactory) -> None:
    model = engine_model(writer="Toujours là.")
    async with make_harness(providers=[model]) as h:
        public_id, headers, room_id = await known_user(h)
        _, staff = await h.user("staff", role="staff")
        for i in range(8):
            await send(h, room_id, headers, f"m{i}")
        assert (await h.client.get(f"/v1/quota/{public_id}", headers=headers)).json()[
            "state"
        ] == "blocked"
        upgraded = await h.client.put(
            f"/v1/users/{public_id}/pro", json={"is_pro": True}, headers=staff
        )
        assert upgraded.status_code == 200 and upgraded.json()["state"] == "normal"
        forbidden = await h.client.put(
            f"/v1/users/{public_id}/pro", json={"is_pro": True}, headers=headers
        )
        assert forbidden.status_code == 403
        reply = (await send(h, room_id, headers, "encore"))["assistant_message"]
        quota = (await h.client.get(f"/v1/quota/{public_id}", headers=headers)).json()
    assert reply["type"] == "message" and reply["content"] == "Toujours là."
    assert quota == {
        **quota,
        "is_pro": True,
        "free_quota_used": 9,
        "state": "normal",
        "paywall_should_show": False,
    }


async def test_paywall_needs_no_working_model(make_harness: HarnessFactory) -> None:
    down = FunctionModel(lambda request: (_ for _ in ()).throw(AssertionError("called")))
    async with make_harness(providers=[down]) as h:
        public_id, headers = await h.user()
        async with h.services.database.session() as session:
            from eko.store import users as user_repo
            from eko.store.models import User

            user = await user_repo.get_by_public_id(session, public_id=public_id)
            assert isinstance(user, User)
            user.free_quota_used = 8
        room_id = await h.direct_room(headers)
        reply = (await send(h, room_id, headers, "hello"))["assistant_message"]
    assert reply["type"] == "paywall" and down.requests == []
