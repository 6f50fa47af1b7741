"""Shared fixtures for LLM-layer tests: an in-memory call log, a refused port."""

from __future__ import annotations

import socket

import pytest

from eko.llm.recording import MemoryRecorder


@pytest.fixture
def recorder() -> MemoryRecorder:
    return MemoryRecorder()


def free_port() -> int:
    """A TCP port that was free a moment ago (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def refused_url() -> str:
    """Base URL of a port nothing listens on: a connection there is refused at once."""
    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.fixture
def unused_port() -> int:
    return free_port()
