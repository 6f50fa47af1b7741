"""The API harness (tests/api/conftest.py) and the CLI environment (tests/cli/conftest.py)
for the lobby's route and command tests."""

from __future__ import annotations

from tests.api.conftest import make_harness
from tests.cli.conftest import cli_env

__all__ = ["cli_env", "make_harness"]
