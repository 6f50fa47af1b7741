"""`eko chat` prints a reply as its deltas come, neutralising terminal controls in them too."""

from __future__ import annotations

from typing import Any

import pytest

from eko.cli import chat as chat_cli
from eko.cli.common import console


class Streaming:
    room_id = "room"

    def __init__(self, stored: str) -> None:
        self.stored = stored

    async def send(self, text: str, on_delta: Any) -> dict[str, Any]:
        for piece in ("Bon", "jour \x1b[2J", "toi"):
            on_delta(piece)
        return {"content": self.stored, "metadata": {}}

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(
    ("stored", "note"), [("Bonjour \x1b[2Jtoi", False), ("Bonjour, toi.", True)]
)
async def test_deltas_print_on_one_line_and_a_different_stored_reply_is_shown(
    monkeypatch: pytest.MonkeyPatch, stored: str, note: bool
) -> None:
    lines = iter(["hello"])

    def fake_input(*_: Any) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(chat_cli.sys.stdin, "isatty", lambda: False, raising=False)
    with console.capture() as captured:
        await chat_cli._loop(Streaming(stored))
    out = captured.get()
    assert "eko> Bonjour \\x1b[2Jtoi\n" in out and "\x1b" not in out
    assert ("stored as: Bonjour, toi." in out) is note


class Tagged:
    room_id = "room"

    async def send(self, text: str, on_delta: Any) -> dict[str, Any]:
        on_delta("Bonjour.")
        meta = {"provider": "local", "mode": "simple", "intent": "chat"}
        return {"content": "Bonjour.", "metadata": meta}

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("details", [False, True])
async def test_no_debug_line_after_a_reply_unless_asked(
    monkeypatch: pytest.MonkeyPatch, details: bool
) -> None:
    """Issue #37: every reply was followed by "local · simple · chat"; only --details shows it."""
    lines = iter(["hello", "again"])

    def fake_input(*_: Any) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(chat_cli.sys.stdin, "isatty", lambda: False, raising=False)
    with console.capture() as captured:
        # By default (no keyword): the old loop printed the line whatever was asked.
        await (chat_cli._loop(Tagged(), details=True) if details else chat_cli._loop(Tagged()))
    out = captured.get()
    assert out.count("eko> Bonjour.\n") == 2
    assert out.count("local · simple · chat") == (2 if details else 0)
