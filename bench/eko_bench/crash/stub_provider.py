"""A stub OpenAI-compatible provider for crash runs: quick answers after a small random delay.

Routes:

- `POST /v1/chat/completions`: after a random delay in [min_delay_s, max_delay_s], a short text
  (or, for structured output, the minimal JSON value valid for the schema: the same answers as
  the load bench's fake upstream, bench/eko_bench/load/fake_upstream.py); with `"stream": true`
  the same text as Server-Sent Events chunks spread over the delay, then `[DONE]`;
- `POST /v1/embeddings`: hashing vectors (eko.embed.hashing, 1536 dimensions, the size Eko
  knows for the model name `text-embedding-3-small`), so the server loads no embedding model;
- `GET /v1/models`: one model, "fake" (the readiness probe).

It is never killed by the bench: it stands for a remote provider that outlives the server.
Run as a process: `python -m eko_bench.crash.stub_provider --port P --seed S`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from eko.embed.hashing import HashEmbedder
from eko_bench.load.fake_upstream import MODEL, answer_text, completion_body
from eko_bench.load.processes import ServerProcess, free_port

EMBED_MODEL = "text-embedding-3-small"
EMBED_DIM = 1536
# A streamed answer is cut into this many chunks (fewer for a shorter text).
STREAM_CHUNKS = 4


def chunks(text: str, parts: int = STREAM_CHUNKS) -> list[str]:
    """`text` in up to `parts` consecutive pieces (whole words), which join back to it."""
    words = text.split(" ")
    size = max(1, -(-len(words) // parts))
    pieces = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [piece + (" " if i < len(pieces) - 1 else "") for i, piece in enumerate(pieces)]


def stream_chunk(content: str | None, *, model: str, finish: str | None = None) -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": {} if content is None else {"content": content},
                "finish_reason": finish,
            }
        ],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


def usage_chunk(model: str) -> bytes:
    body = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def create_app(*, min_delay_s: float, max_delay_s: float, seed: int = 0) -> Starlette:
    rng = random.Random(seed)
    embedder = HashEmbedder(dim=EMBED_DIM)

    def delay() -> float:
        return rng.uniform(min_delay_s, max_delay_s)

    async def completions(request: Request) -> Response:
        body = await request.json()
        text, _ = answer_text(body)
        model = str(body.get("model") or MODEL)
        wait = delay()
        if not body.get("stream"):
            await asyncio.sleep(wait)
            return JSONResponse(completion_body(text, model=model))
        return StreamingResponse(_stream(text, model, wait), media_type="text/event-stream")

    async def _stream(text: str, model: str, wait: float) -> AsyncIterator[bytes]:
        pieces = chunks(text)
        for piece in pieces:
            await asyncio.sleep(wait / len(pieces))
            yield stream_chunk(piece, model=model)
        yield stream_chunk(None, model=model, finish="stop")
        yield usage_chunk(model)
        yield b"data: [DONE]\n\n"

    async def embeddings(request: Request) -> JSONResponse:
        body = await request.json()
        given = body.get("input")
        texts = [given] if isinstance(given, str) else [str(t) for t in given or []]
        vectors = await embedder.embed(texts)
        return JSONResponse(
            {
                "object": "list",
                "model": str(body.get("model") or EMBED_MODEL),
                "data": [
                    {"object": "embedding", "index": i, "embedding": vector.tolist()}
                    for i, vector in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)},
            }
        )

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "eko"}]}
        )

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/embeddings", embeddings, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )


class StubProvider:
    """The stub in its own process on a free port; `async with` starts and stops it."""

    def __init__(
        self,
        *,
        workdir: Path,
        env: dict[str, str],
        min_delay_s: float = 0.05,
        max_delay_s: float = 0.3,
        seed: int = 0,
    ) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        self._process = ServerProcess(
            "stub-provider",
            [
                sys.executable,
                "-m",
                "eko_bench.crash.stub_provider",
                "--port",
                self.url.rsplit(":", 1)[1],
                "--min-delay",
                str(min_delay_s),
                "--max-delay",
                str(max_delay_s),
                "--seed",
                str(seed),
            ],
            ready_url=f"{self.url}/v1/models",
            env=env,
            cwd=workdir,
            start_timeout_s=30.0,
            stop_grace_s=3.0,
        )

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    async def __aenter__(self) -> StubProvider:
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

    parser = argparse.ArgumentParser(description="A stub OpenAI-compatible provider.")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--min-delay", type=float, default=0.05)
    parser.add_argument("--max-delay", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    uvicorn.run(
        create_app(min_delay_s=args.min_delay, max_delay_s=args.max_delay, seed=args.seed),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


if __name__ == "__main__":
    main()
