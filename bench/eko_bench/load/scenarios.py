"""The load scenarios, each against a running Eko server, each returning what it measured.

(a) distinct: N different messages posted at once in one direct room;
(b) duplicates: N identical posts at once, the same client_message_id (or Idempotency-Key);
(c) hung primary: the first provider never answers; K users, each in their own room, post at
    once and must be answered by the fallback.

Counts come from the database once the burst has settled (records.py); statuses and times from
the HTTP answers; /health is polled throughout each burst.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from eko_bench.load.client import (
    HealthSamples,
    Outcome,
    PostSpec,
    burst,
    create_direct_room,
    health_poller,
)
from eko_bench.load.records import RoomCounts, create_pro_users, settled_counts

FALLBACK = "fallback"
DuplicateKey = Literal["client_message_id", "idempotency_key"]


@dataclass
class ScenarioResult:
    scenario: str
    label: str
    outcomes: list[Outcome]
    counts: RoomCounts
    health: HealthSamples
    elapsed_s: float
    notes: list[str] = field(default_factory=list)
    # The end of the server's log, kept when a request got a 5xx or no answer.
    server_log: str = ""

    @property
    def requests(self) -> int:
        return len(self.outcomes)

    @property
    def statuses(self) -> Counter[int | None]:
        """Status code → requests; None counts requests that got no HTTP answer."""
        return Counter(o.status for o in self.outcomes)

    def count(self, low: int, high: int, *, exclude: int | None = None) -> int:
        return sum(
            1
            for o in self.outcomes
            if o.status is not None and low <= o.status <= high and o.status != exclude
        )

    @property
    def ok(self) -> int:
        return self.count(200, 299)

    @property
    def unavailable(self) -> int:
        return self.statuses.get(503, 0)

    @property
    def client_errors(self) -> int:
        return self.count(400, 499)

    @property
    def server_errors(self) -> int:
        """5xx other than 503 (a 503 is the documented overload answer)."""
        return self.count(500, 599, exclude=503)

    @property
    def no_response(self) -> int:
        return self.statuses.get(None, 0)

    @property
    def ok_seconds(self) -> list[float]:
        """Response times of the 2xx answers, fastest first."""
        return sorted(o.seconds for o in self.outcomes if _ok(o.status))

    @property
    def first_answer_s(self) -> float | None:
        times = self.ok_seconds
        return times[0] if times else None


def _ok(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _one_room(
    base_url: str, database_url: str, user: str, timeout_s: float
) -> tuple[str, str]:
    [key] = await create_pro_users(database_url, [user])
    return key, await create_direct_room(base_url, key, timeout_s=timeout_s)


async def _measure(
    scenario: str,
    label: str,
    base_url: str,
    database_url: str,
    specs: list[PostSpec],
    room_ids: list[str],
    *,
    timeout_s: float,
    settle_s: float,
) -> ScenarioResult:
    began = time.perf_counter()
    async with health_poller(base_url) as health:
        outcomes = await burst(base_url, specs, timeout_s=timeout_s)
    elapsed = time.perf_counter() - began
    counts = await settled_counts(database_url, room_ids, bound_s=settle_s)
    return ScenarioResult(scenario, label, outcomes, counts, health, elapsed)


async def distinct_messages(
    base_url: str,
    database_url: str,
    *,
    messages: int = 100,
    timeout_s: float = 60.0,
    settle_s: float = 30.0,
) -> ScenarioResult:
    """(a) `messages` different messages at once in one direct room."""
    key, room = await _one_room(base_url, database_url, "load-distinct", timeout_s)
    specs = [
        PostSpec(
            f"/v1/rooms/{room}/messages",
            {"content": f"Question {i} : combien font {i} plus {i} ?"},
            _auth(key),
        )
        for i in range(messages)
    ]
    return await _measure(
        "a",
        f"a {messages} distinct, 1 room",
        base_url,
        database_url,
        specs,
        [room],
        timeout_s=timeout_s,
        settle_s=settle_s,
    )


async def duplicate_posts(
    base_url: str,
    database_url: str,
    *,
    key_kind: DuplicateKey,
    requests: int = 1000,
    timeout_s: float = 60.0,
    settle_s: float = 30.0,
) -> ScenarioResult:
    """(b) `requests` identical posts at once in one room: one message, one reply expected."""
    key, room = await _one_room(base_url, database_url, f"load-dup-{key_kind}", timeout_s)
    token = f"load-{uuid.uuid4().hex}"
    body: dict[str, str] = {"content": "Bonjour, peux-tu me rappeler le planning de demain ?"}
    headers = _auth(key)
    if key_kind == "client_message_id":
        body["client_message_id"] = token
        label = f"b {requests} same client_message_id"
    else:
        headers["Idempotency-Key"] = token
        label = f"b {requests} same Idempotency-Key"
    specs = [PostSpec(f"/v1/rooms/{room}/messages", body, headers)] * requests
    result = await _measure(
        "b", label, base_url, database_url, specs, [room], timeout_s=timeout_s, settle_s=settle_s
    )
    if result.counts.unanswered:
        result.notes.append(f"{result.counts.unanswered} stored without reply")
    return result


async def hung_primary(
    base_url: str,
    database_url: str,
    *,
    users: int = 16,
    timeout_s: float = 60.0,
    settle_s: float = 30.0,
) -> ScenarioResult:
    """(c) `users` users, each in their own room, post at once; the primary never answers."""
    keys = await create_pro_users(database_url, [f"load-hung-{i}" for i in range(users)])
    rooms = [await create_direct_room(base_url, key, timeout_s=timeout_s) for key in keys]
    specs = [
        PostSpec(
            f"/v1/rooms/{room}/messages",
            {"content": f"Utilisateur {i} : quel temps fera-t-il demain ?"},
            _auth(key),
        )
        for i, (key, room) in enumerate(zip(keys, rooms, strict=True))
    ]
    result = await _measure(
        "c",
        f"c hung primary, {users} users",
        base_url,
        database_url,
        specs,
        rooms,
        timeout_s=timeout_s,
        settle_s=settle_s,
    )
    by_fallback = result.counts.providers.get(FALLBACK, 0)
    result.notes.append(f"answered by fallback {by_fallback}/{users}")
    if result.first_answer_s is not None:
        result.notes.append(f"first answer {result.first_answer_s:.1f} s; p50/p95 of the rest")
    return result
