"""The local model's line through a real server (both backends): people told their place in
order over SSE and answered for real; past EKO_LOCAL_MAX_QUEUE, refused before anything is
stored. The model is a slow scripted llama.cpp (no real model)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.llm.slow_llama import ANSWER, SlowLlama, slow_local

from .live_server import LiveEko, running_eko
from .test_streaming_live_server import events


def new_room(eko: LiveEko) -> str:
    response = httpx.post(f"{eko.url}/v1/rooms", json={"kind": "direct"}, headers=eko.headers)
    return str(response.json()["id"])


class Poster(threading.Thread):
    """One person posting a message and reading its reply's events as they come."""

    def __init__(self, eko: LiveEko, room_id: str, content: str, *, timeout_s: float = 120) -> None:
        super().__init__(daemon=True)
        self.eko, self.room_id, self.content = eko, room_id, content
        self.timeout_s = timeout_s
        self.seen: list[tuple[str, Any]] = []
        self.status: int | None = None

    def run(self) -> None:
        with httpx.stream(
            "POST",
            f"{self.eko.url}/v1/rooms/{self.room_id}/messages?stream=true",
            json={"content": self.content},
            headers=self.eko.headers,
            timeout=self.timeout_s,
        ) as response:
            self.status = response.status_code
            for event in events(response.iter_lines()):
                self.seen.append(event)

    def places(self) -> list[int]:
        return [data["position"] for name, data in self.seen if name == "queued"]

    def done(self) -> dict[str, Any]:
        name, data = self.seen[-1]
        assert name == "done", self.seen
        return dict(data)


def wait_for(condition: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition never met"
        time.sleep(0.02)


def test_people_are_told_their_place_in_order_and_answered_for_real(
    database_url: str, tmp_path: Path
) -> None:
    llama = SlowLlama(delay=4.0)
    # The first call holds the model until the others are in line (one call per message:
    # the local model routes by rules).
    llama.release = threading.Event()
    local = slow_local(tmp_path, llama)
    with running_eko(database_url, [local]) as eko:
        rooms = [new_room(eko) for _ in range(3)]
        first = Poster(eko, rooms[0], "Bonjour, première question")
        first.start()
        wait_for(lambda: local.gate.held)
        llama.delay = 0.3  # every later call is short
        second = Poster(eko, rooms[1], "Bonjour, deuxième question")
        second.start()
        wait_for(lambda: bool(second.places()))
        third = Poster(eko, rooms[2], "Bonjour, troisième question")
        third.start()
        wait_for(lambda: bool(third.places()))

        # While people wait, the model is busy, not down.
        health = httpx.get(f"{eko.url}/health").json()
        assert health["model"]["status"] == "busy"
        assert health["model"]["providers"][0]["circuit"] == "closed"
        llama.release.set()

        for poster in (first, second, third):
            poster.join(60)
            assert not poster.is_alive()
        # In arrival order: one call ahead of the second person, two ahead of the third.
        assert second.places()[0] == 1 and third.places()[0] == 2
        second_first = next(d for n, d in second.seen if n == "queued")
        third_first = next(d for n, d in third.seen if n == "queued")
        assert third_first["estimate_s"] > second_first["estimate_s"] > 0
        # Their turn came (position 0), and each got a real answer, never the apology.
        assert second.places()[-1] == 0 and third.places()[-1] == 0
        for poster in (first, second, third):
            done = poster.done()
            assert done["source"] == "model", done
            assert done["message"]["content"] == ANSWER
        # The first person's later call waits at most for the call in flight: it goes before
        # the people who came after them.
        assert max(first.places(), default=0) <= 1
        assert httpx.get(f"{eko.url}/health").json()["model"]["status"] == "up"


def test_a_full_line_refuses_new_messages_before_storing_them(
    database_url: str, tmp_path: Path
) -> None:
    llama = SlowLlama(delay=3.0)
    local = slow_local(tmp_path, llama)
    with running_eko(database_url, [local], local_max_queue=1) as eko:
        rooms = [new_room(eko) for _ in range(3)]
        first = Poster(eko, rooms[0], "Bonjour")
        first.start()
        wait_for(lambda: local.gate.held)
        llama.delay = 0.3
        second = Poster(eko, rooms[1], "Bonjour aussi")  # one in line: the limit
        second.start()
        wait_for(lambda: bool(second.places()))

        refused = httpx.post(
            f"{eko.url}/v1/rooms/{rooms[2]}/messages",
            json={"content": "Et moi ?"},
            headers=eko.headers,
            timeout=30,
        )
        assert refused.status_code == 503
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert int(refused.headers["Retry-After"]) >= 1
        assert "waiting for the local model" in refused.json()["detail"]
        # Nothing stored: no message in that room, and no answer owed.
        page = httpx.get(f"{eko.url}/v1/rooms/{rooms[2]}/messages", headers=eko.headers).json()
        assert page["items"] == []

        for poster in (first, second):
            poster.join(60)
            assert poster.done()["message"]["content"] == ANSWER
        # The line is free again: the same message is accepted now.
        accepted = httpx.post(
            f"{eko.url}/v1/rooms/{rooms[2]}/messages",
            json={"content": "Et moi ?"},
            headers=eko.headers,
            timeout=60,
        )
        assert accepted.status_code == 201, accepted.text
