"""Learning on the default stack, through a real server (real sockets).

Extraction is on with any model unless turned off. A fact told in one message is extracted
after the reply (at background priority), filtered (what the assistant said is not a memory
of the user), stored, and read by the writer when a later question needs it. The reply never
says it stored anything: that sentence is removed and reported in the metadata.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import running_eko

TOLD = "My sister Léa plays the cello in a youth orchestra."
ASKED = "What does my sister play?"
CLAIM = "I'll remember that Léa plays the cello."


class Recorder:
    def __init__(self) -> None:
        self.requests: list[ProviderRequest] = []
        self.model = FunctionModel(self.answer)
        # What the bundled model declares: routed by rules, the writer's compact prompt.
        self.model.max_prompt_tokens = 1_280  # type: ignore[attr-defined]
        self.model.prefers_compact_output = True

    async def answer(self, request: ProviderRequest) -> str:
        self.requests.append(request)
        schema = json.dumps(request.json_schema or {})
        if '"items"' in schema:  # the extraction call
            items = [
                {
                    "kind": "fact",
                    "subject": "Léa",
                    "content": "Client's sister Léa plays the cello in a youth orchestra.",
                    "confidence": 0.9,
                },
                {  # the assistant's own words: not a memory of the user
                    "kind": "fact",
                    "subject": "Bach",
                    "content": "Bach's suites are lovely pieces for a young cellist.",
                    "confidence": 0.9,
                },
            ]
            return json.dumps({"items": items, "answered_goals": []})
        if request.json_schema is not None:
            return '{"intent": "general_question", "context_level": "light"}'
        if "Anyway" not in request.messages[-1].content:
            return f"Lovely! {CLAIM} Bach's suites are lovely pieces for a young cellist."
        return "She plays the cello."

    def writer_prompts(self) -> list[str]:
        return [
            "\n".join(m.content for m in r.messages) for r in self.requests if r.json_schema is None
        ]


def _post(client: httpx.Client, room: str, text: str) -> dict[str, Any]:
    response = client.post(f"/v1/rooms/{room}/messages", json={"content": text})
    assert response.status_code == 201, response.text
    reply: dict[str, Any] = response.json()["assistant_message"]
    return reply


def _facts(client: httpx.Client) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        items: list[dict[str, Any]] = client.get("/v1/memory/items").json()
        if items or time.monotonic() > deadline:
            return items
        time.sleep(0.1)


def test_a_told_fact_is_learned_by_default_and_read_when_asked(database_url: str) -> None:
    model = Recorder()
    # memory_extract_enabled left empty: the default stack's setting. The test server runs
    # no lifespan, so no procrastinate worker: the in-process queue runs the job on both
    # databases (procrastinate's worker has its own tests in tests/jobs).
    with (
        running_eko(
            database_url, [model.model], memory_extract_enabled=None, jobs_backend="local"
        ) as eko,
        httpx.Client(base_url=eko.url, headers=eko.headers, timeout=60) as client,
    ):
        room = client.post("/v1/rooms", json={"kind": "direct"}).json()["id"]
        first = _post(client, room, TOLD)
        facts = _facts(client)
        answer = _post(client, room, "Anyway. " + ASKED)
    # The reply did not claim to store anything; what it said is reported.
    assert "remember" not in first["content"]
    assert first["content"].startswith("Lovely!")
    assert first["metadata"]["storage_claims_removed"] == [CLAIM]
    # One item learned: the user's fact, not the assistant's suggestion.
    assert [(f["kind"], f["subject"]) for f in facts] == [("fact", "Léa")], facts
    assert "cello" in facts[0]["content"]
    # The later question's writer prompt holds the learned fact.
    assert "youth orchestra" in model.writer_prompts()[-1].split("Anyway.")[0]
    assert answer["content"] == "She plays the cello."
    assert "storage_claims_removed" not in answer["metadata"] or not answer["metadata"].get(
        "storage_claims_removed"
    )
