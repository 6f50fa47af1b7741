"""Staff's side of accounts through the API, on both backends: invitations (once, until they
expire), API keys (created, listed, revoked -> 401), roles and plans, lobby members by name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from eko.store.account_models import Invitation
from tests.api.accounts_helpers import PASSWORD, session_of, setup_operator, sign_in
from tests.api.conftest import HarnessFactory


async def test_an_invitation_is_used_once_and_not_after_it_expires(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        ops = await setup_operator(h.client)
        made = await h.client.post("/v1/invitations", json={"is_pro": True}, headers=ops.writes)
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        assert made.json()["link"].endswith(f"/#/invite/{token}")
        assert (await h.client.get(f"/v1/invite/{token}")).json()["is_pro"] is True

        accepted = await h.client.post(
            f"/v1/invite/{token}", json={"name": "Lina", "password": PASSWORD}
        )
        h.client.cookies.clear()
        lina = session_of(accepted)
        me = (await h.client.get("/v1/me", headers=lina.reads)).json()
        assert me["display_name"] == "Lina" and me["role"] == "member" and me["is_pro"] is True

        reused = await h.client.post(
            f"/v1/invite/{token}", json={"name": "Mallory", "password": PASSWORD}
        )
        assert reused.status_code == 410
        assert reused.json()["type"].endswith("invitation-unusable")
        assert (await sign_in(h.client, "Mallory")).status_code == 401
        assert (await h.client.get(f"/v1/invite/{token}")).status_code == 410

        late = await h.client.post("/v1/invitations", json={}, headers=ops.writes)
        async with h.services.database.session() as session:
            await session.execute(
                update(Invitation)
                .where(Invitation.public_id == late.json()["id"])
                .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
            )
        expired = await h.client.post(
            f"/v1/invite/{late.json()['token']}", json={"name": "Late", "password": PASSWORD}
        )
        assert expired.status_code == 410
        users = (await h.client.get("/v1/users", headers=ops.reads)).json()
        assert sorted(u["display_name"] for u in users) == ["Lina", "Ops"]


async def test_a_taken_name_is_refused_and_the_invitation_stays_open(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        ops = await setup_operator(h.client, "Ops")
        token = (await h.client.post("/v1/invitations", json={}, headers=ops.writes)).json()[
            "token"
        ]
        taken = await h.client.post(
            f"/v1/invite/{token}", json={"name": "OPS", "password": PASSWORD}
        )
        assert taken.status_code == 409
        assert (await h.client.get(f"/v1/invite/{token}")).status_code == 200


async def test_only_staff_invite_and_manage_people(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        ops = await setup_operator(h.client)
        member_id, member = await h.user("bob")
        assert (await h.client.post("/v1/invitations", json={}, headers=member)).status_code == 403
        assert (
            await h.client.get(f"/v1/users/{member_id}/keys", headers=member)
        ).status_code == 403
        changed = await h.client.patch(
            f"/v1/users/{member_id}",
            json={"role": "staff", "is_pro": True, "free_quota_limit": 20},
            headers=ops.writes,
        )
        assert changed.status_code == 200
        assert changed.json()["role"] == "staff" and changed.json()["free_quota_limit"] == 20
        # Back to member; then the operator, the last staff member, cannot be demoted.
        await h.client.patch(f"/v1/users/{member_id}", json={"role": "member"}, headers=ops.writes)
        ops_id = (await h.client.get("/v1/me", headers=ops.reads)).json()["public_id"]
        last = await h.client.patch(
            f"/v1/users/{ops_id}", json={"role": "member"}, headers=ops.writes
        )
        assert last.status_code == 409
        bad = await h.client.patch(
            f"/v1/users/{member_id}", json={"role": "king"}, headers=ops.writes
        )
        assert bad.status_code == 422
        # Created with a password: signs in, no key.
        created = await h.client.post(
            "/v1/users", json={"display_name": "Zoé", "password": PASSWORD}, headers=ops.writes
        )
        assert created.status_code == 201 and created.json()["api_key"] is None
        assert (await sign_in(h.client, "zoé")).status_code == 200


async def test_keys_are_created_listed_and_revoked(make_harness: HarnessFactory) -> None:
    async with make_harness() as h:
        ops = await setup_operator(h.client)
        made = await h.client.post("/v1/me/keys", json={"name": "backup"}, headers=ops.writes)
        assert made.status_code == 201
        key, key_id = made.json()["key"], made.json()["id"]
        program = {"Authorization": f"Bearer {key}"}
        assert (await h.client.get("/v1/me", headers=program)).status_code == 200
        listed = (await h.client.get("/v1/me/keys", headers=ops.reads)).json()
        assert [(k["id"], k["name"], k["revoked_at"]) for k in listed] == [(key_id, "backup", None)]
        assert "key" not in listed[0] and key.startswith(listed[0]["prefix"])

        revoked = await h.client.delete(f"/v1/me/keys/{key_id}", headers=ops.writes)
        assert revoked.status_code == 204
        refused = await h.client.get("/v1/me", headers=program)
        assert refused.status_code == 401
        assert refused.json()["type"].endswith("invalid-api-key")
        assert (await h.client.get("/v1/me/keys", headers=ops.reads)).json()[0]["revoked_at"]
        assert (await h.client.delete("/v1/me/keys/nope", headers=ops.writes)).status_code == 404

        # Staff manage another user's keys; that user's own key keeps working until revoked.
        bob_id, bob = await h.user("bob")
        bob_keys = (await h.client.get(f"/v1/users/{bob_id}/keys", headers=ops.reads)).json()
        assert [k["name"] for k in bob_keys] == ["initial"]
        gone = await h.client.delete(
            f"/v1/users/{bob_id}/keys/{bob_keys[0]['id']}", headers=ops.writes
        )
        assert gone.status_code == 204
        assert (await h.client.get("/v1/me", headers=bob)).status_code == 401


async def test_lobby_members_are_added_by_name_with_suggestions(
    make_harness: HarnessFactory,
) -> None:
    async with make_harness() as h:
        _, alice = await h.user("Alice")
        await h.user("Alfred")
        await h.user("Bob")
        await h.user("Bobby")
        await h.user("Bobby")  # two people with one display name
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        suggestions = await h.client.get(
            f"/v1/rooms/{lobby['id']}/member-suggestions", params={"q": "al"}, headers=alice
        )
        assert [s["display_name"] for s in suggestions.json()] == ["Alfred"]  # Alice is in
        added = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"name": "bob"}, headers=alice
        )
        assert added.status_code == 204
        members = (await h.client.get(f"/v1/rooms/{lobby['id']}/members", headers=alice)).json()
        assert [m["display_name"] for m in members] == ["Alice", "Bob"]
        after = await h.client.get(
            f"/v1/rooms/{lobby['id']}/member-suggestions", params={"q": "bob"}, headers=alice
        )
        assert [s["display_name"] for s in after.json()] == ["Bobby", "Bobby"]

        ambiguous = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"name": "Bobby"}, headers=alice
        )
        assert ambiguous.status_code == 409
        unknown = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"name": "Nobody"}, headers=alice
        )
        assert unknown.status_code == 404
        both = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members",
            json={"name": "Bob", "public_id": "x"},
            headers=alice,
        )
        assert both.status_code == 422
        members = (await h.client.get(f"/v1/rooms/{lobby['id']}/members", headers=alice)).json()
        assert len(members) == 2  # nothing changed by the refused ones
