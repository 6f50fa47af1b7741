"""The manual reflection trigger through the API, on both backends (issue #32): one reflection
by hand per user per EKO_REFLECTION_MANUAL_INTERVAL_S (429 problem+json with Retry-After),
staff not limited, and manual interventions never eat the day's scheduled budget."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import update

from eko.llm.providers import FunctionModel
from eko.memory.items import NewItem
from eko.memory.scopes import room_key
from eko.store.lobby_models import Reflection
from eko.store.models import utcnow
from tests.api.conftest import Harness, HarnessFactory
from tests.lobby.kit import ScriptedReflection

PROBLEM = "application/problem+json"


async def open_lobby(h: Harness, owner: dict[str, str], *members: str, goals: int = 3) -> str:
    lobby = (await h.client.post("/v1/rooms", json={"kind": "lobby"}, headers=owner)).json()
    for public_id in members:
        added = await h.client.post(
            f"/v1/rooms/{lobby['id']}/members", json={"public_id": public_id}, headers=owner
        )
        assert added.status_code == 204, added.text
    for number in range(goals):
        await h.services.memory.items.remember(
            NewItem(kind="goal", subject=f"Sujet {number}", content=f"Question {number} ?"),
            scope=room_key(lobby["id"]),
        )
    return str(lobby["id"])


async def say(h: Harness, headers: dict[str, str], lobby: str, text: str = "on merge ?") -> None:
    posted = await h.client.post(
        f"/v1/rooms/{lobby}/messages", json={"content": text}, headers=headers
    )
    assert posted.status_code == 201, posted.text


async def age_reflections(h: Harness) -> None:
    """Pretend every reflection so far happened an hour ago."""
    async with h.services.database.session() as session:
        await session.execute(update(Reflection).values(created_at=utcnow() - timedelta(hours=1)))


async def trigger(h: Harness, headers: dict[str, str], lobby: str, **body: Any) -> Any:
    return await h.client.post(
        f"/v1/rooms/{lobby}/reflection/trigger", json=body or None, headers=headers
    )


async def test_a_member_triggers_once_per_interval_then_gets_429(
    make_harness: HarnessFactory,
) -> None:
    script = ScriptedReflection()
    async with make_harness(providers=[FunctionModel(script)]) as h:
        assert h.settings.reflection_manual_interval_s == 600
        _, alice = await h.user("alice")
        bob_id, bob = await h.user("bob")
        lobby = await open_lobby(h, alice, bob_id)
        await say(h, alice, lobby)
        first = await trigger(h, alice, lobby)
        assert first.status_code == 200, first.text
        assert first.json()["reflection"]["action"] == "message"

        # Again at once (forced, after a new message): refused before any model call.
        await say(h, alice, lobby)
        for body in ({}, {"force": True}):
            again = await trigger(h, alice, lobby, **body)
            assert again.status_code == 429, again.text
            assert again.headers["content-type"].startswith(PROBLEM)
            problem = again.json()
            assert problem["type"] == "urn:eko:problem:too-many-requests"
            assert 590 <= int(again.headers["retry-after"]) <= 600
            assert problem["retry_after_s"] == int(again.headers["retry-after"])
        assert script.calls == 1

        # Per user: Bob has not used his.
        by_bob = await trigger(h, bob, lobby)
        assert by_bob.status_code == 200, by_bob.text
        assert by_bob.json()["reflection"]["action"] == "message"
        assert script.calls == 2

        # Once the interval has passed, Alice may again.
        await age_reflections(h)
        await say(h, alice, lobby)
        later = await trigger(h, alice, lobby)
        assert later.status_code == 200, later.text
        assert script.calls == 3


async def test_a_trigger_that_asked_no_model_does_not_count(
    make_harness: HarnessFactory,
) -> None:
    script = ScriptedReflection()
    async with make_harness(providers=[FunctionModel(script)]) as h:
        _, alice = await h.user("alice")
        lobby = await open_lobby(h, alice)
        # Nothing said yet... then the assistant speaks last: skipped, free.
        await say(h, alice, lobby)
        assert (await trigger(h, alice, lobby)).status_code == 200
        await age_reflections(h)
        skipped = await trigger(h, alice, lobby)
        assert skipped.json()["reflection"]["skipped"] == "last_message_is_assistant"
        await say(h, alice, lobby)
        asked = await trigger(h, alice, lobby)
        assert asked.status_code == 200, asked.text
        assert asked.json()["reflection"]["action"] == "message"


async def test_staff_are_not_limited(make_harness: HarnessFactory) -> None:
    script = ScriptedReflection()
    async with make_harness(providers=[FunctionModel(script)]) as h:
        _, alice = await h.user("alice")
        _, staff = await h.user("root", role="staff")
        lobby = await open_lobby(h, alice)
        for _ in range(3):
            await say(h, alice, lobby)
            response = await trigger(h, staff, lobby)
            assert response.status_code == 200, response.text
            assert response.json()["reflection"]["action"] == "message"
        assert script.calls == 3


async def test_manual_interventions_do_not_eat_the_scheduled_budget(
    make_harness: HarnessFactory,
) -> None:
    script = ScriptedReflection()
    async with make_harness(
        providers=[FunctionModel(script)], reflection_max_per_day=1, reflection_cooldown_s=0
    ) as h:
        _, alice = await h.user("alice")
        bob_id, bob = await h.user("bob")
        lobby = await open_lobby(h, alice, bob_id)
        for headers in (alice, bob):
            await say(h, headers, lobby)
            manual = await trigger(h, headers, lobby)
            assert manual.json()["reflection"]["action"] == "message"
        # The day's one scheduled intervention is still there (as the cron job runs it).
        await say(h, alice, lobby)
        scheduled = await h.services.lobby.reflector.reflect(lobby, trigger="scheduled")
        assert scheduled.action == "message" and not scheduled.rate_limited
        # And it is the only one.
        await say(h, bob, lobby)
        second = await h.services.lobby.reflector.reflect(lobby, trigger="scheduled")
        assert second.rate_limited
        status = (await h.client.get(f"/v1/rooms/{lobby}/reflection/status", headers=alice)).json()
        assert status["today"]["messages"] == 3
