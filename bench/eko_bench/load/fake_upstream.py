"""A fake OpenAI-compatible model server for load runs: fixed latency, or no answer at all.

Routes (one process serves both behaviours, so a run needs one upstream):

- `POST /v1/chat/completions`: answers after `latency_s` with a short text, or, when the
  request has a `response_format` with a JSON schema, with the minimal JSON value valid for it
  (bench/eko_bench/load/schema_instance.py);
- `POST /hang/v1/chat/completions`: accepts the request and never answers (a hung provider);
- `GET /v1/models`, `GET /hang/v1/models`: one model, "fake";
- `GET /stats`: requests answered, structured answers, requests left hanging;
- `POST /script` `{"schema": name, "when": text, "answer": value}`: from then on, a structured
  request for that schema (response_format name or title) whose messages contain `when` is
  answered with `answer` (tests script a distinctive extracted fact this way);
- `GET /requests`: the last requests received (schema name, messages' text), oldest first, so a
  test can check what reached the model's context.

Run as a process: `python -m eko_bench.load.fake_upstream --port P --latency 0.3`;
`FakeUpstream` does that and stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from eko_bench.load.processes import ServerProcess, free_port
from eko_bench.load.schema_instance import minimal_instance

MODEL = "fake"
REPLY_TEXT = "Voici une réponse courte du modèle de test."


@dataclass
class UpstreamCounts:
    served: int = 0
    structured: int = 0
    hung: int = 0


def answer_text(body: dict[str, Any]) -> tuple[str, bool]:
    """The completion's content for a request body, and whether it is structured output."""
    response_format = body.get("response_format") or {}
    kind = response_format.get("type")
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return json.dumps(minimal_instance(schema or {}), ensure_ascii=False), True
    if kind == "json_object":
        schema = response_format.get("schema")
        text = json.dumps(minimal_instance(schema), ensure_ascii=False) if schema else "{}"
        return text, True
    return REPLY_TEXT, False


def completion_body(text: str, *, model: str = MODEL) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
    }


# Requests kept for GET /requests (a bounded window: load runs send tens of thousands).
RECORDED_REQUESTS = 2000


@dataclass(frozen=True)
class ScriptedAnswer:
    schema: str
    when: str
    answer: Any


def schema_name(body: dict[str, Any]) -> str | None:
    """The structured output's name (json_schema.name, else the schema's title), if any."""
    response_format = body.get("response_format") or {}
    spec = response_format.get("json_schema") or {}
    schema = spec.get("schema") or response_format.get("schema") or {}
    name = spec.get("name") or schema.get("title")
    return str(name) if name else None


def prompt_text(body: dict[str, Any]) -> str:
    """Every message's text content, one per line."""
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return "\n".join(parts)


def scripted(body: dict[str, Any], script: list[ScriptedAnswer]) -> str | None:
    name = schema_name(body)
    if name is None:
        return None
    text = prompt_text(body)
    for entry in script:
        if entry.schema == name and entry.when in text:
            return json.dumps(entry.answer, ensure_ascii=False)
    return None


def create_app(*, latency_s: float, counts: UpstreamCounts | None = None) -> Starlette:
    """The upstream as an ASGI app; `counts` is updated as requests are served."""
    tally = counts if counts is not None else UpstreamCounts()
    script: list[ScriptedAnswer] = []
    recorded: deque[dict[str, Any]] = deque(maxlen=RECORDED_REQUESTS)

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        recorded.append({"schema": schema_name(body), "text": prompt_text(body)})
        text, structured = answer_text(body)
        text = scripted(body, script) or text
        await asyncio.sleep(latency_s)
        tally.served += 1
        tally.structured += structured
        return JSONResponse(completion_body(text, model=str(body.get("model") or MODEL)))

    async def hang(request: Request) -> JSONResponse:
        await request.body()
        tally.hung += 1
        await asyncio.Event().wait()  # never set: the caller's timeout is what ends this
        raise AssertionError("unreachable")

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "eko"}]}
        )

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(asdict(tally))

    async def add_script(request: Request) -> JSONResponse:
        body = await request.json()
        script.append(ScriptedAnswer(str(body["schema"]), str(body["when"]), body["answer"]))
        return JSONResponse({"scripted": len(script)})

    async def requests(request: Request) -> JSONResponse:
        return JSONResponse(list(recorded))

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/hang/v1/chat/completions", hang, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/hang/v1/models", models, methods=["GET"]),
            Route("/stats", stats, methods=["GET"]),
            Route("/script", add_script, methods=["POST"]),
            Route("/requests", requests, methods=["GET"]),
        ]
    )


class FakeUpstream:
    """The upstream in its own process on a free port; `async with` starts and stops it."""

    def __init__(self, *, latency_s: float, workdir: Path, env: dict[str, str]) -> None:
        self.latency_s = latency_s
        self.url = f"http://127.0.0.1:{free_port()}"
        self._process = ServerProcess(
            "fake-upstream",
            [
                sys.executable,
                "-m",
                "eko_bench.load.fake_upstream",
                "--port",
                self.url.rsplit(":", 1)[1],
                "--latency",
                str(latency_s),
            ],
            ready_url=f"{self.url}/v1/models",
            env=env,
            cwd=workdir,
            start_timeout_s=30.0,
            # Hung requests never finish: do not wait long for a graceful exit.
            stop_grace_s=3.0,
        )

    @property
    def fast_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def hung_base_url(self) -> str:
        return f"{self.url}/hang/v1"

    async def counts(self) -> UpstreamCounts:
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.get(f"{self.url}/stats")
            response.raise_for_status()
            return UpstreamCounts(**response.json())

    async def script(self, *, schema: str, when: str, answer: Any) -> None:
        """Answer structured requests for `schema` whose prompt contains `when` with `answer`."""
        async with httpx.AsyncClient(timeout=10.0) as client:
            body = {"schema": schema, "when": when, "answer": answer}
            (await client.post(f"{self.url}/script", json=body)).raise_for_status()

    async def requests(self) -> list[dict[str, Any]]:
        """The last requests received: {"schema": name or None, "text": the messages' text}."""
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.get(f"{self.url}/requests")
            response.raise_for_status()
            recorded: list[dict[str, Any]] = response.json()
            return recorded

    async def __aenter__(self) -> FakeUpstream:
        await self._process.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self._process.stop)


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description="A fake OpenAI-compatible upstream.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per answer")
    args = parser.parse_args(argv)
    uvicorn.run(
        create_app(latency_s=args.latency),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


if __name__ == "__main__":
    main()
