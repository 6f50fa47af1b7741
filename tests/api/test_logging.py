"""Logs are JSON lines; a request's lines carry its request id, which the response echoes."""

from __future__ import annotations

import json
import logging

import pytest

from eko.logging import configure_logging
from tests.api.conftest import HarnessFactory


async def test_request_lines_are_json_with_the_request_id(
    make_harness: HarnessFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("INFO")
    try:
        async with make_harness() as h:
            response = await h.client.get("/health", headers={"X-Request-ID": "req-42"})
        logging.getLogger("alembic").info("a library line")
    finally:
        logging.getLogger().handlers.clear()
    assert response.headers["x-request-id"] == "req-42"
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    access = [line for line in lines if line["event"] == "http.request"]
    assert access and access[0]["request_id"] == "req-42" and access[0]["status"] == 200
    assert access[0]["logger"] == "eko.api"
    assert any(line["event"] == "a library line" and line["logger"] == "alembic" for line in lines)
