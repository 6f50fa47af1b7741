"""The tool registry and the built-in tools: errors come back as results, never raise;
the workspace refuses escapes; memory tools stay within the caller's scopes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from eko.chain.tools import ToolContext, ToolRegistry, build_tools
from eko.chain.tools.registry import Tool, ToolError
from eko.chain.tools.schema import check_args
from eko.store.db import Database
from eko.store.models import Room, User
from tests.memory.conftest import make_kit


def _ctx() -> ToolContext:
    return ToolContext(user=User(id="u", public_id="p"), room=Room(id="r", kind="direct"))


async def _echo(_context: ToolContext, args: dict[str, Any]) -> Any:
    return args


async def _boom(_context: ToolContext, args: dict[str, Any]) -> Any:
    raise RuntimeError("handler bug")


async def _slow(_context: ToolContext, args: dict[str, Any]) -> Any:
    await asyncio.sleep(5)


SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "minLength": 1}, "n": {"type": "integer"}},
    "required": ["q"],
    "additionalProperties": False,
}


def registry() -> ToolRegistry:
    return ToolRegistry.of(
        [
            Tool("echo", "echo", SCHEMA, _echo),
            Tool("boom", "fails", {"type": "object"}, _boom),
            Tool("slow", "hangs", {"type": "object"}, _slow),
        ],
        timeout_s=0.05,
    )


async def test_a_valid_call_returns_the_handler_result() -> None:
    result = await registry().call(_ctx(), "echo", {"q": "x", "n": 2})
    assert result.ok and result.result == {"q": "x", "n": 2}
    # `error` is always there (null here), as the API's ToolUseOut reads it back.
    assert result.to_meta() == {
        "name": "echo",
        "args": {"q": "x", "n": 2},
        "result": result.result,
        "error": None,
    }


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("move_file", {"src": "a"}, "unknown tool; known tools: echo, boom, slow"),
        ("ls", {}, "unknown tool"),
        ("echo", {}, "missing required argument 'q'"),
        ("echo", {"q": 3}, "must be string"),
        ("echo", {"q": "x", "n": "2"}, "must be integer"),
        ("echo", {"q": "x", "n": True}, "must be integer"),
        ("echo", {"q": ""}, "too short"),
        ("echo", {"q": "x", "path": "/"}, "unknown argument 'path'"),
        ("echo", ["q"], "must be a JSON object"),
        ("boom", {}, "RuntimeError: handler bug"),
        ("slow", {}, "timed out"),
    ],
)
async def test_bad_calls_come_back_as_error_results(name: str, args: Any, error: str) -> None:
    result = await registry().call(_ctx(), name, args)
    assert not result.ok
    assert error in (result.error or "")
    assert result.for_model().startswith(f"ERROR {name}:")


def test_schema_checks_bounds_and_enums() -> None:
    schema = {
        "type": "object",
        "properties": {
            "k": {"type": "integer", "minimum": 1, "maximum": 5},
            "kind": {"type": "string", "enum": ["fact", "goal"]},
        },
    }
    assert check_args(schema, {"k": 3, "kind": "fact"}) == []
    assert check_args(schema, {"k": 9}) == ["argument 'k' must be <= 5"]
    assert check_args(schema, {"kind": "x"}) == ["argument 'kind' must be one of ['fact', 'goal']"]


def test_registry_describes_tools_and_refuses_duplicates() -> None:
    tools = registry()
    assert "- echo(q: string, n?: integer): echo" in tools.describe()
    with pytest.raises(ValueError):
        tools.register(Tool("echo", "again", SCHEMA, _echo))


# --- workspace ---


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'Hello'\n", encoding="utf-8")
    (root / "notes.txt").write_text("TODO: ship the chain\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("password: hunter2\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.symlink(tmp_path, root / "outside")
    return root


async def test_workspace_tools_are_absent_without_a_folder() -> None:
    assert build_tools().names == []


async def test_workspace_lists_reads_and_greps(workspace: Path) -> None:
    tools = build_tools(workspace=workspace)
    assert tools.names == ["list_dir", "read_file", "grep"]
    listing = await tools.call(_ctx(), "list_dir", {})
    assert listing.result == {"path": ".", "entries": ["notes.txt", "src/"]}
    read = await tools.call(_ctx(), "read_file", {"path": "src/app.py"})
    assert read.result["content"].startswith("def main()")
    found = await tools.call(_ctx(), "grep", {"pattern": "hello"})
    assert found.result["matches"] == ["src/app.py:2: return 'Hello'"]


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("list_dir", {"path": ".."}, "'..' is not allowed"),
        ("list_dir", {"path": "src/../.."}, "'..' is not allowed"),
        ("read_file", {"path": "/etc/passwd"}, "absolute paths"),
        ("read_file", {"path": "C:\\Windows\\win.ini"}, "absolute paths"),
        ("read_file", {"path": "link.txt"}, "outside the workspace"),
        ("list_dir", {"path": "outside"}, "outside the workspace"),
        ("read_file", {"path": "outside/secret.txt"}, "outside the workspace"),
        ("grep", {"pattern": "password", "path": "outside"}, "outside the workspace"),
        ("read_file", {"path": "missing.txt"}, "is not a file"),
    ],
)
async def test_workspace_escapes_are_refused(
    workspace: Path, tool: str, args: dict[str, Any], error: str
) -> None:
    result = await build_tools(workspace=workspace).call(_ctx(), tool, args)
    assert not result.ok
    assert error in (result.error or "")


async def test_grep_never_reads_through_a_symlink_out(workspace: Path) -> None:
    result = await build_tools(workspace=workspace).call(_ctx(), "grep", {"pattern": "hunter2"})
    assert result.result["matches"] == []


def test_tool_error_is_an_exception() -> None:
    assert issubclass(ToolError, Exception)


# --- memory (both backends) ---


async def test_memory_tools_stay_within_the_callers_scopes(database: Database) -> None:
    kit = make_kit(database)
    alice, bob = await kit.user("Alice"), await kit.user("Bob")
    alice_room, bob_room = await kit.room(alice), await kit.room(bob)
    tools = build_tools(items=kit.memory.items, summaries=kit.memory.summary_reader)
    assert tools.names == ["search_memories", "remember_fact", "search_summaries"]
    alice_ctx = ToolContext(user=alice, room=alice_room)
    written = await tools.call(
        alice_ctx, "remember_fact", {"subject": "pet", "content": "Alice has a cat named Miso"}
    )
    assert written.ok and written.result["created"] is True
    mine = await tools.call(alice_ctx, "search_memories", {"query": "cat named Miso"})
    assert [hit["content"] for hit in mine.result] == ["Alice has a cat named Miso"]
    theirs = await tools.call(
        ToolContext(user=bob, room=bob_room), "search_memories", {"query": "cat named Miso"}
    )
    assert theirs.ok and theirs.result == []
    summaries = await tools.call(alice_ctx, "search_summaries", {"query": "cat", "topic": "nope"})
    assert not summaries.ok and "no topic" in (summaries.error or "")
