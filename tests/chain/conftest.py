"""Chain tests: the API harness and a memory kit on the current backend."""

from __future__ import annotations

from tests.api.conftest import make_harness  # noqa: F401
