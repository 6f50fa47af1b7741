"""One chat post as a client sees it across a crash: was the message acknowledged?

A post is `POST /v1/rooms/{id}/messages` with a client message id, either in the body
(`client_message_id`) or as an `Idempotency-Key` header, answered as JSON or streamed as
Server-Sent Events (docs/api.md). The client counts the message acknowledged when it saw its
storage confirmed: a 201 with the JSON exchange, or, streamed, the `message` event (sent once
the user message is stored, before the answer is written). A stream cut by the crash after
that event is still an acknowledged message: the server promised to answer it.

Plain HTTP/1.1 on a new connection per post (as eko_bench.load.http), read incrementally so a
stream's first event counts even when the connection dies right after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from eko_bench.load.http import HTTPProtocolError, host_port

_NO_ANSWER = (TimeoutError, OSError, asyncio.IncompleteReadError, HTTPProtocolError)


@dataclass(frozen=True)
class Post:
    """One message of a burst."""

    room_id: str
    api_key: str
    content: str
    client_id: str
    stream: bool
    # The client id as an Idempotency-Key header (else as client_message_id in the body).
    as_header: bool


@dataclass(frozen=True)
class PostResult:
    post: Post
    # The HTTP status; None when no status line came (refused, reset, timeout).
    status: int | None
    acknowledged: bool
    # A streamed post: the `done` event arrived (the reply reached the client).
    completed: bool
    seconds: float
    error: str | None = None


def request_head(base_url: str, post: Post, body: bytes) -> bytes:
    host, port = host_port(base_url)
    lines = [
        f"POST /v1/rooms/{post.room_id}/messages HTTP/1.1",
        f"Host: {host}:{port}",
        "Connection: close",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        f"Authorization: Bearer {post.api_key}",
    ]
    if post.stream:
        lines.append("Accept: text/event-stream")
    if post.as_header:
        lines.append(f"Idempotency-Key: {post.client_id}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def request_body(post: Post) -> bytes:
    payload: dict[str, Any] = {"content": post.content}
    if not post.as_header:
        payload["client_message_id"] = post.client_id
    return json.dumps(payload, ensure_ascii=False).encode()


async def send(base_url: str, post: Post, *, timeout_s: float) -> PostResult:
    """Send one post and follow its answer until done, the crash, or `timeout_s`."""
    began = time.perf_counter()
    seen = _Seen()
    try:
        async with asyncio.timeout(timeout_s):
            await _exchange(base_url, post, seen)
    except _NO_ANSWER as exc:
        seen.error = type(exc).__name__
    return PostResult(
        post,
        seen.status,
        seen.acknowledged,
        seen.completed,
        time.perf_counter() - began,
        seen.error,
    )


@dataclass
class _Seen:
    status: int | None = None
    acknowledged: bool = False
    completed: bool = False
    error: str | None = None


async def _exchange(base_url: str, post: Post, seen: _Seen) -> None:
    host, port = host_port(base_url)
    body = request_body(post)
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(request_head(base_url, post, body) + body)
        await writer.drain()
        status, headers = await _read_head(reader)
        seen.status = status
        if status != 201:
            return
        if "text/event-stream" not in headers.get("content-type", ""):
            await _read_body(reader, headers)
            seen.acknowledged = True
            seen.completed = True
            return
        async for event in sse_events(_body_chunks(reader, headers)):
            if event == "message":
                seen.acknowledged = True
            elif event in ("done", "error"):
                seen.completed = event == "done"
                return
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status_line = await reader.readline()
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise HTTPProtocolError(f"bad status line {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n"):
            return int(parts[1]), headers
        if not line:
            raise HTTPProtocolError("connection closed inside the headers")
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    return b"".join([chunk async for chunk in _body_chunks(reader, headers)])


async def _body_chunks(
    reader: asyncio.StreamReader, headers: dict[str, str]
) -> AsyncIterator[bytes]:
    """The body as it arrives: by Content-Length, chunked, or until the connection closes. A
    connection cut mid-body raises IncompleteReadError (chunked, sized) or ends (unsized)."""
    if "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
        return
    if headers.get("transfer-encoding", "").lower() != "chunked":
        while chunk := await reader.read(65536):
            yield chunk
        return
    while True:
        size_line = await reader.readline()
        if not size_line:
            raise asyncio.IncompleteReadError(b"", None)
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise HTTPProtocolError(f"bad chunk size {size_line[:40]!r}") from exc
        if size == 0:
            return
        yield await reader.readexactly(size)
        await reader.readexactly(2)  # the CRLF after each chunk


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The names of the Server-Sent Events in a byte stream, each once its blank line came."""
    buffer = b""
    name, fields = "message", 0  # "message": the SSE default when a frame names none
    async for chunk in chunks:
        buffer += chunk
        while b"\n" in buffer:
            raw, buffer = buffer.split(b"\n", 1)
            line = raw.rstrip(b"\r")
            if not line:
                if fields:
                    yield name
                name, fields = "message", 0
            elif not line.startswith(b":"):
                fields += 1
                if line.startswith(b"event:"):
                    name = line[6:].strip().decode("utf-8", errors="replace")
