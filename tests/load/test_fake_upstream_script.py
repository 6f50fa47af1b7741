"""The fake upstream's scripted structured answers and its record of the requests it received
(what the cross-process isolation test reads)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from eko_bench.load.fake_upstream import REPLY_TEXT, create_app


def _completion(content: str, *, schema: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "fake",
        "messages": [
            {"role": "system", "content": "You extract facts."},
            {"role": "user", "content": [{"type": "text", "text": content}]},
        ],
    }
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema,
                "schema": {"type": "object", "properties": {"items": {"type": "array"}}},
            },
        }
    return body


async def test_a_scripted_answer_applies_to_its_schema_and_text_only() -> None:
    transport = httpx.ASGITransport(app=create_app(latency_s=0.0))
    async with httpx.AsyncClient(transport=transport, base_url="http://up.test") as client:
        answer = {"items": [{"content": "Alice's code is Zanzibar-7781"}]}
        scripted = await client.post(
            "/script", json={"schema": "MemoryExtraction", "when": "Zanzibar", "answer": answer}
        )
        assert scripted.status_code == 200

        async def content(body: dict[str, Any]) -> str:
            response = await client.post("/v1/chat/completions", json=body)
            text: str = response.json()["choices"][0]["message"]["content"]
            return text

        hit = await content(_completion("my code is Zanzibar", schema="MemoryExtraction"))
        other_text = await content(_completion("bonjour", schema="MemoryExtraction"))
        other_schema = await content(_completion("Zanzibar", schema="Orchestrator"))
        plain = await content(_completion("Zanzibar"))
        recorded = (await client.get("/requests")).json()
    assert json.loads(hit) == answer
    assert json.loads(other_text) == {}  # the minimal instance: no required properties
    assert json.loads(other_schema) == {}
    assert plain == REPLY_TEXT
    assert [r["schema"] for r in recorded] == [
        "MemoryExtraction",
        "MemoryExtraction",
        "Orchestrator",
        None,
    ]
    assert recorded[0]["text"] == "You extract facts.\nmy code is Zanzibar"
