"""The load client's minimal HTTP/1.1: framing of the answers uvicorn (and a broken peer) send."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from eko_bench.load.http import HTTPProtocolError, request


@pytest.fixture
async def canned() -> AsyncIterator[tuple[str, list[bytes], list[bytes]]]:
    """A server answering each connection with the next canned bytes; records the requests."""
    answers: list[bytes] = []
    received: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lengths = [
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ]
        length = lengths[0] if lengths else 0
        received.append(head + await reader.readexactly(length))
        answer = answers.pop(0)
        if answer:
            writer.write(answer)
            await writer.drain()
            writer.close()
        else:
            await asyncio.sleep(3600)  # never answers

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", answers, received
    finally:
        server.close()


async def test_content_length_body_and_the_request_sent(
    canned: tuple[str, list[bytes], list[bytes]],
) -> None:
    url, answers, received = canned
    answers.append(b'HTTP/1.1 201 Created\r\nContent-Length: 11\r\nX-A: b\r\n\r\n{"id": "r"}')
    response = await request(
        url, "POST", "/v1/rooms", json_body={"kind": "direct"}, headers={"K": "v"}, timeout_s=5
    )
    assert (response.status, response.json(), response.headers["x-a"]) == (201, {"id": "r"}, "b")
    head, _, body = received[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/rooms HTTP/1.1\r\n")
    assert b"\r\nK: v" in head and b"Content-Type: application/json" in head
    assert json.loads(body) == {"kind": "direct"}


async def test_chunked_and_close_delimited_bodies(
    canned: tuple[str, list[bytes], list[bytes]],
) -> None:
    url, answers, _ = canned
    answers.append(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nBonj\r\n3\r\nour\r\n0\r\n\r\n"
    )
    answers.append(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n\r\nbusy")
    chunked = await request(url, "GET", "/health", timeout_s=5)
    closed = await request(url, "GET", "/health", timeout_s=5)
    assert (chunked.status, chunked.body) == (200, b"Bonjour")
    assert (closed.status, closed.body, closed.headers["retry-after"]) == (503, b"busy", "2")


async def test_garbage_and_silence_are_errors_not_answers(
    canned: tuple[str, list[bytes], list[bytes]],
) -> None:
    url, answers, _ = canned
    answers += [b"SSH-2.0-OpenSSH\r\n\r\n", b""]
    with pytest.raises(HTTPProtocolError):
        await request(url, "GET", "/", timeout_s=5)
    with pytest.raises(TimeoutError):
        await request(url, "GET", "/", timeout_s=0.3)
