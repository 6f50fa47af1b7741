"""A minimal HTTP/1.1 client for load bursts: one connection per request, nothing pooled.

Why not httpx: measured on 2 cores, 1,000 concurrent POSTs through one httpx.AsyncClient cost
the client ~6 s of CPU (its pool scans every connection for each request), against ~0.3 s
here; the client then competed with the server it measures. One connection per request is
also what concurrent users do. Scope: plain HTTP to 127.0.0.1, bodies by Content-Length,
chunked, or until close, which is what uvicorn sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


class HTTPProtocolError(Exception):
    """The server's answer was not parseable HTTP/1.1."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def host_port(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    if parts.scheme != "http" or parts.hostname is None or parts.port is None:
        raise ValueError(f"expected http://host:port, got {base_url!r}")
    return parts.hostname, parts.port


async def request(
    base_url: str,
    method: str,
    path: str,
    *,
    json_body: Any = None,
    headers: dict[str, str] | None = None,
    timeout_s: float,
) -> Response:
    """Send one request on a new connection and read the whole answer, within `timeout_s`.

    Raises TimeoutError, OSError (refused, reset), asyncio.IncompleteReadError or
    HTTPProtocolError when no complete answer came."""
    host, port = host_port(base_url)
    payload = b"" if json_body is None else json.dumps(json_body).encode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    if json_body is not None:
        lines.append("Content-Type: application/json")
    if payload or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(payload)}")
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    async with asyncio.timeout(timeout_s):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(head + payload)
            await writer.drain()
            return await _read_response(reader)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _read_response(reader: asyncio.StreamReader) -> Response:
    status_line = await reader.readline()
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise HTTPProtocolError(f"bad status line {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n"):
            break
        if not line:
            raise HTTPProtocolError("connection closed inside the headers")
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.read()
    return Response(int(parts[1]), headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readline()
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise HTTPProtocolError(f"bad chunk size {size_line[:40]!r}") from exc
        if size == 0:
            # Trailers, if any, end with an empty line.
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readline()  # the CRLF after each chunk
