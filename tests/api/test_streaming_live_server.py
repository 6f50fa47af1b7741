"""Native streaming through a real server: disconnect, stop, regenerate, mid-stream failure, and
`eko chat` printing tokens as they come (both backends)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from typer.testing import CliRunner

from eko.cli import app
from eko.cli.chat import RemoteSession
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import LiveEko, running_eko

SLOW = tuple(f"mot{i} " for i in range(60))


def scripted_writer() -> FunctionModel:
    """The last user message picks the writer's answer: slow, broken, or numbered versions."""
    versions: list[int] = []

    def answer(request: ProviderRequest) -> str | Deltas:
        if request.json_schema is not None:
            return "not json"
        last = request.messages[-1].content
        if "lent" in last:
            return Deltas(SLOW, delay_s=0.03)
        if "casse" in last:
            return Deltas(("Moitié ", "de ", "phrase"), fail_after=2)
        versions.append(1)
        return Deltas(("Version ", f"{len(versions)}."))

    return FunctionModel(answer)


def events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    name = ""
    for line in lines:
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            yield name, json.loads(line[6:])


def post(eko: LiveEko, room_id: str, content: str) -> list[tuple[str, Any]]:
    with httpx.stream(
        "POST",
        f"{eko.url}/v1/rooms/{room_id}/messages?stream=true",
        json={"content": content},
        headers=eko.headers,
        timeout=30,
    ) as response:
        assert response.status_code == 201
        return list(events(response.iter_lines()))


def reply_to(eko: LiveEko, room_id: str, user_message_id: str, wait_s: float = 10) -> dict:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        page = httpx.get(f"{eko.url}/v1/rooms/{room_id}/messages", headers=eko.headers).json()
        for item in page["items"]:
            if item["reply_to_id"] == user_message_id:
                return dict(item)
        time.sleep(0.05)
    raise AssertionError("no reply stored")


def test_streaming_through_a_real_server(database_url: str) -> None:
    with running_eko(database_url, [scripted_writer()]) as eko:
        room_id = httpx.post(
            f"{eko.url}/v1/rooms", json={"kind": "direct"}, headers=eko.headers
        ).json()["id"]

        # A client that closes the stream stops the generation; what was shown is stored.
        with httpx.stream(
            "POST",
            f"{eko.url}/v1/rooms/{room_id}/messages",
            json={"content": "réponds lentement"},
            headers={**eko.headers, "Accept": "text/event-stream"},
            timeout=30,
        ) as response:
            stream = events(response.iter_lines())
            name, user_message = next(stream)
            assert name == "message"
            assert [next(stream)[0] for _ in range(3)] == ["delta"] * 3
        stopped = reply_to(eko, room_id, user_message["id"])
        assert stopped["metadata"]["stopped"] is True
        assert stopped["content"].startswith("mot0 mot1 mot2")
        assert len(stopped["content"]) < len("".join(SLOW).strip())
        calls = httpx.get(f"{eko.url}/v1/rooms/{room_id}/llm-calls", headers=eko.headers).json()
        writer = [c for c in calls if c["purpose"] == "writer"]
        assert "stopped by the caller" in writer[-1]["error"]

        # POST …/stop while another client reads the stream.
        seen: list[tuple[str, Any]] = []

        def read() -> None:
            with httpx.stream(
                "POST",
                f"{eko.url}/v1/rooms/{room_id}/messages?stream=true",
                json={"content": "encore lent"},
                headers=eko.headers,
                timeout=30,
            ) as response:
                for event in events(response.iter_lines()):
                    seen.append(event)  # one by one, as they come

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 10
        while sum(name == "delta" for name, _ in seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        stop = httpx.post(
            f"{eko.url}/v1/rooms/{room_id}/messages/{seen[0][1]['id']}/stop", headers=eko.headers
        )
        assert stop.status_code == 202, stop.text
        reader.join(10)
        done = seen[-1]
        assert done[0] == "done" and done[1]["message"]["metadata"]["stopped"] is True

        # A provider failing mid-stream: an error event, then the partial reply, marked.
        broken = post(eko, room_id, "ça casse")
        assert [name for name, _ in broken] == ["message", "delta", "delta", "error", "done"]
        assert broken[-1][1]["message"]["metadata"]["incomplete"] is True

        # Regenerate: a new version in place, the older one kept.
        first = post(eko, room_id, "Salut")[-1][1]["message"]
        assert first["content"] == "Version 1."
        again = httpx.post(
            f"{eko.url}/v1/rooms/{room_id}/messages/{first['id']}/regenerate",
            headers=eko.headers,
            timeout=30,
        ).json()
        assert (again["id"], again["content"]) == (first["id"], "Version 2.")
        versions = httpx.get(
            f"{eko.url}/v1/rooms/{room_id}/messages/{first['id']}/versions", headers=eko.headers
        ).json()
        assert [v["content"] for v in versions["previous"]] == ["Version 1."]

        # `eko chat` prints the reply as it comes, delta by delta.
        deltas: list[str] = []

        async def chat_once() -> dict[str, Any] | None:
            session = await RemoteSession.open(eko.url, key=eko.key, room_id=room_id, persona=None)
            try:
                return await session.send("Salut", deltas.append)
            finally:
                await session.close()

        reply = asyncio.run(chat_once())
        assert deltas == ["Version", " 3."] and reply is not None
        assert reply["content"] == "Version 3."
        result = CliRunner().invoke(
            app, ["chat", "--server", eko.url, "--key", eko.key], input="Salut\n/quit\n"
        )
        assert result.exit_code == 0, result.output
        assert "eko> Version 4." in result.output
