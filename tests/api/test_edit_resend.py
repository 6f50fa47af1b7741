"""Edit the last message and resend it: both old versions kept, the new ones shown."""

from __future__ import annotations

from sqlalchemy import select, update

from eko.llm.types import ProviderRequest
from eko.store.models import User
from tests.api.conftest import HarnessFactory

from .test_stop_regenerate import versioned_model
from .test_streaming_replies import parse_sse


async def test_edit_stores_a_new_version_and_a_new_reply(make_harness: HarnessFactory) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        posted = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "Salut"}, headers=headers
            )
        ).json()
        mine, reply = posted["user_message"], posted["assistant_message"]
        async with h.services.database.session() as session:
            used = (await session.execute(select(User.free_quota_used))).scalar_one()
        edited = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{mine['id']}/edit",
            json={"content": "  Bonjour plutôt  "},
            headers=headers,
        )
        assert edited.status_code == 200, edited.text
        body = edited.json()
        assert body["user_message"]["id"] == mine["id"]
        assert body["user_message"]["content"] == "Bonjour plutôt"
        assert body["user_message"]["metadata"]["version"] == 2
        assert body["assistant_message"]["id"] == reply["id"]
        assert body["assistant_message"]["content"] == "Version 2."
        # The model read the edited text, not the old one.
        assert calls[-1].messages[-1].content.startswith("Bonjour plutôt")
        assert not any("Salut" in m.content for m in calls[-1].messages)
        # Counted like a new message.
        async with h.services.database.session() as session:
            assert (await session.execute(select(User.free_quota_used))).scalar_one() == used + 1

        page = (await h.client.get(f"/v1/rooms/{room_id}/messages", headers=headers)).json()
        assert [(m["role"], m["content"]) for m in page["items"]] == [
            ("user", "Bonjour plutôt"),
            ("assistant", "Version 2."),
        ]
        assert page["items"][0]["char_count"] == len("Bonjour plutôt")
        own = (
            await h.client.get(
                f"/v1/rooms/{room_id}/messages/{mine['id']}/versions", headers=headers
            )
        ).json()
        assert [(v["version"], v["content"]) for v in own["previous"]] == [(1, "Salut")]
        answers = (
            await h.client.get(
                f"/v1/rooms/{room_id}/messages/{reply['id']}/versions", headers=headers
            )
        ).json()
        assert [(v["version"], v["content"]) for v in answers["previous"]] == [(1, "Version 1.")]

        # Streamed: the edited message first, then the new reply.
        streamed = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{mine['id']}/edit?stream=true",
            json={"content": "Encore autre chose"},
            headers=headers,
        )
        assert streamed.status_code == 200, streamed.text
        events = parse_sse(streamed.text)
        assert events[0][0] == "message" and events[0][1]["content"] == "Encore autre chose"
        assert events[-1][0] == "done"
        assert events[-1][1]["message"]["content"] == "Version 3."
        own = (
            await h.client.get(
                f"/v1/rooms/{room_id}/messages/{mine['id']}/versions", headers=headers
            )
        ).json()
        assert [v["content"] for v in own["previous"]] == ["Salut", "Bonjour plutôt"]
        assert own["current"]["metadata"]["version"] == 3


async def test_edit_refusals_are_problems(make_harness: HarnessFactory) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        room_id = await h.direct_room(alice)
        first = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "Un"}, headers=alice
            )
        ).json()
        second = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "Deux"}, headers=alice
            )
        ).json()
        base = f"/v1/rooms/{room_id}/messages"
        refusals = {
            # not the last message
            409: await h.client.post(
                f"{base}/{first['user_message']['id']}/edit", json={"content": "x"}, headers=alice
            ),
            # a reply is not a message one edits; an unknown id neither
            404: await h.client.post(
                f"{base}/{second['assistant_message']['id']}/edit",
                json={"content": "x"},
                headers=alice,
            ),
            # empty text
            422: await h.client.post(
                f"{base}/{second['user_message']['id']}/edit", json={"content": " "}, headers=alice
            ),
        }
        for status, response in refusals.items():
            assert response.status_code == status, response.text
            assert response.headers["content-type"] == "application/problem+json"
        # Someone else's room: not found.
        other = await h.client.post(
            f"{base}/{second['user_message']['id']}/edit", json={"content": "x"}, headers=bob
        )
        assert other.status_code == 404
        assert other.headers["content-type"] == "application/problem+json"
        other_versions = await h.client.get(
            f"{base}/{second['user_message']['id']}/versions", headers=bob
        )
        assert other_versions.status_code == 404
        too_long = await h.client.post(
            f"{base}/{second['user_message']['id']}/edit",
            json={"content": "x" * (h.settings.max_message_chars + 1)},
            headers=alice,
        )
        assert too_long.status_code == 413
        # Nothing changed by the refusals.
        page = (await h.client.get(base, headers=alice)).json()
        assert [m["content"] for m in page["items"] if m["role"] == "user"] == ["Un", "Deux"]
        assert len(calls) == 2


async def test_only_the_sender_edits_in_a_lobby(make_harness: HarnessFactory) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, alice = await h.user("alice")
        _, bob = await h.user("bob")
        lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=alice)).json()
        added = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"name": "bob"}, headers=alice
        )
        assert added.status_code == 204
        posted = (
            await h.client.post(
                f"/v1/rooms/{lobby['id']}/messages",
                json={"content": "Eko, une question"},
                headers=alice,
            )
        ).json()
        assert posted["assistant_message"] is not None
        mine = posted["user_message"]["id"]
        by_bob = await h.client.post(
            f"/v1/rooms/{lobby['id']}/messages/{mine}/edit", json={"content": "x"}, headers=bob
        )
        assert by_bob.status_code == 403, by_bob.text
        assert by_bob.headers["content-type"] == "application/problem+json"
        # Bob may read the versions of a message in his room.
        assert (
            await h.client.get(f"/v1/rooms/{lobby['id']}/messages/{mine}/versions", headers=bob)
        ).status_code == 200
        by_alice = await h.client.post(
            f"/v1/rooms/{lobby['id']}/messages/{mine}/edit",
            json={"content": "Eko, une autre question"},
            headers=alice,
        )
        assert by_alice.status_code == 200, by_alice.text
        assert by_alice.json()["user_message"]["content"] == "Eko, une autre question"


async def test_an_edit_past_the_free_quota_gets_the_paywall(make_harness: HarnessFactory) -> None:
    calls: list[ProviderRequest] = []
    async with make_harness(providers=[versioned_model(calls)]) as h:
        _, headers = await h.user()
        room_id = await h.direct_room(headers)
        async with h.services.database.session() as session:
            await session.execute(update(User).values(free_quota_used=6))
        posted = (
            await h.client.post(
                f"/v1/rooms/{room_id}/messages", json={"content": "Septième"}, headers=headers
            )
        ).json()
        assert posted["assistant_message"]["type"] != "paywall"
        asked = len(calls)
        edited = await h.client.post(
            f"/v1/rooms/{room_id}/messages/{posted['user_message']['id']}/edit",
            json={"content": "Huitième, en fait"},
            headers=headers,
        )
        assert edited.status_code == 200, edited.text
        reply = edited.json()["assistant_message"]
        assert reply["type"] == "paywall"
        assert reply["content"] == h.services.prompts.text("quota/paywall.md")
        assert len(calls) == asked  # no model call for the paywall
