"""The README documents every configuration knob and every `eko` command group."""

from __future__ import annotations

from pathlib import Path

import typer

from eko.cli import app
from eko.config import Settings

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented() -> None:
    missing = [name for name in Settings.model_fields if f"`EKO_{name.upper()}`" not in README]
    assert missing == []


def test_every_command_group_is_documented() -> None:
    group = typer.main.get_command(app)
    names = group.list_commands(typer.Context(group))  # type: ignore[attr-defined]
    assert "users" in names and "rooms" in names
    missing = [name for name in names if f"eko {name}" not in README]
    assert missing == []
