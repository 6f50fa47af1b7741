"""Fixtures of the chat tests: the API harness (tests/api/conftest.py), reused here."""

from tests.api.conftest import make_harness  # noqa: F401
