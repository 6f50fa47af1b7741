"""`eko rooms attach|attachments|detach` with the bundled embedder (real stack)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eko.cli import app
from tests.pdf_file import pdf_bytes

runner = CliRunner()
pytestmark = pytest.mark.slow


async def _invoke(*args: str) -> Any:
    # In a thread: the CLI runs its own event loop, and these tests are on pytest's.
    return await asyncio.to_thread(runner.invoke, app, list(args))


async def test_attach_list_and_detach_and_bad_files_exit_non_zero(
    cli_env: str, tmp_path: Path, make_harness: Callable[..., Any]
) -> None:
    async with make_harness() as harness:
        _, headers = await harness.user("Alice")
        room = await harness.direct_room(headers)
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf_bytes("The lighthouse budget is 4,200 euros."))
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(pdf_bytes(""))
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG\r\n")

    attached = await _invoke("rooms", "attach", room[:8], str(report))
    assert attached.exit_code == 0, attached.output
    assert f"attached report.pdf to room {room}" in attached.output
    assert "1 chunk(s)" in attached.output

    refused = await _invoke("rooms", "attach", room, str(scan))
    assert refused.exit_code == 2
    assert "no text found in the PDF" in refused.output and "nothing was stored" in refused.output
    unsupported = await _invoke("rooms", "attach", room, str(photo))
    assert unsupported.exit_code == 2 and "attach a text (.txt)" in unsupported.output
    missing = await _invoke("rooms", "attach", room, str(tmp_path / "nope.txt"))
    assert missing.exit_code == 1 and "no file" in missing.output
    no_room = await _invoke("rooms", "attach", "ffffffff", str(report))
    assert no_room.exit_code == 1 and "no room 'ffffffff'" in no_room.output

    listed = await _invoke("rooms", "attachments", room)
    assert listed.exit_code == 0, listed.output
    assert "1 attachment(s)" in listed.output and "report.pdf" in listed.output
    assert "application/pdf" in listed.output
    found = re.search(r"\b([0-9a-f]{32})\b.*report\.pdf", listed.output)
    assert found is not None, listed.output
    # What the CLI stored is the room's, through the API too.
    async with make_harness() as harness:
        names = await harness.client.get(f"/v1/rooms/{room}/attachments", headers=headers)
        assert [a["filename"] for a in names.json()] == ["report.pdf"]

    removed = await _invoke("rooms", "detach", room, found.group(1)[:10])
    assert removed.exit_code == 0, removed.output
    assert f"removed attachment {found.group(1)}" in removed.output
    empty = await _invoke("rooms", "attachments", room)
    assert "0 attachment(s)" in empty.output
