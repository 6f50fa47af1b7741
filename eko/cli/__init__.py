"""The `eko` command: serve | chat | doctor | users | db | bench."""

from eko.cli.app import app, main

__all__ = ["app", "main"]
