"""How many llama.cpp threads a test's own model gets: what the servers the tests start get."""

from __future__ import annotations

import os


def llama_threads() -> int:
    """`EKO_LOCAL_THREADS` (1 under two test workers, see tests/conftest.py), else 2.

    A test that loads the model itself must follow it too: two threads beside a busy worker
    spin against each other and ran the model about 2x slower than one."""
    return int(os.environ.get("EKO_LOCAL_THREADS", "2"))
