"""A read-only workspace: list_dir, read_file, grep, confined to one configured folder.

A path is always relative to the workspace root. An absolute path, a `..` component, or a path
that resolves outside the root (a symlink pointing out) is refused with a ToolError.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import Any

from eko.chain.tools.registry import Tool, ToolContext, ToolError

MAX_ENTRIES = 100
MAX_READ_CHARS = 4000
MAX_GREP_FILES = 500
MAX_GREP_FILE_BYTES = 1_000_000
MAX_GREP_MATCHES = 20
_PATH = {"type": "string", "maxLength": 500}


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        if not self.root.is_dir():
            raise ValueError(f"workspace {root} is not a directory")

    def resolve(self, relative: str) -> Path:
        """The real path of `relative` inside the root; ToolError when it would escape."""
        text = (relative or ".").strip().replace("\\", "/")
        pure = PurePosixPath(text)
        if pure.is_absolute() or (len(text) > 1 and text[1] == ":"):
            raise ToolError(f"path {relative!r} refused: absolute paths are not allowed")
        if ".." in pure.parts:
            raise ToolError(f"path {relative!r} refused: '..' is not allowed")
        real = (self.root / pure).resolve()
        if real != self.root and not real.is_relative_to(self.root):
            raise ToolError(f"path {relative!r} refused: it leads outside the workspace")
        return real

    def shown(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def list_dir(self, relative: str) -> dict[str, Any]:
        path = self.resolve(relative)
        if not path.is_dir():
            raise ToolError(f"{relative!r} is not a directory")
        entries = []
        for child in sorted(path.iterdir(), key=lambda p: p.name)[:MAX_ENTRIES]:
            try:
                self.resolve(self.shown(child))
            except ToolError:
                continue  # a symlink leading out is not even listed
            entries.append(child.name + ("/" if child.is_dir() else ""))
        return {"path": self.shown(path), "entries": entries}

    def read_file(self, relative: str, max_chars: int) -> dict[str, Any]:
        path = self.resolve(relative)
        if not path.is_file():
            raise ToolError(f"{relative!r} is not a file")
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            text = handle.read(max_chars + 1)
        return {
            "path": self.shown(path),
            "content": text[:max_chars],
            "truncated": len(text) > max_chars,
        }

    def grep(self, needle: str, relative: str) -> dict[str, Any]:
        """Lines containing `needle` (case-insensitive, literal), under `relative`."""
        base = self.resolve(relative)
        wanted = needle.lower()
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        matches: list[str] = []
        for path in files[:MAX_GREP_FILES]:
            try:
                if not path.resolve().is_relative_to(self.root):
                    continue  # a symlink leading out
                if path.stat().st_size > MAX_GREP_FILE_BYTES:
                    continue
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except (OSError, ValueError):
                continue
            for number, line in enumerate(lines, start=1):
                if wanted in line.lower():
                    matches.append(f"{self.shown(path)}:{number}: {line.strip()[:200]}")
                    if len(matches) >= MAX_GREP_MATCHES:
                        return {"pattern": needle, "matches": matches, "truncated": True}
        return {"pattern": needle, "matches": matches, "truncated": False}


def workspace_tools(workspace: Workspace) -> list[Tool]:
    async def list_dir(_context: ToolContext, args: dict[str, Any]) -> Any:
        return await asyncio.to_thread(workspace.list_dir, str(args.get("path", ".")))

    async def read_file(_context: ToolContext, args: dict[str, Any]) -> Any:
        limit = int(args.get("max_chars", MAX_READ_CHARS))
        return await asyncio.to_thread(workspace.read_file, str(args["path"]), limit)

    async def grep(_context: ToolContext, args: dict[str, Any]) -> Any:
        return await asyncio.to_thread(
            workspace.grep, str(args["pattern"]), str(args.get("path", "."))
        )

    return [
        Tool(
            "list_dir",
            "List a folder of the workspace (path relative to the workspace, default '.').",
            {"type": "object", "properties": {"path": _PATH}, "additionalProperties": False},
            list_dir,
        ),
        Tool(
            "read_file",
            "Read a text file of the workspace (path relative to the workspace).",
            {
                "type": "object",
                "properties": {
                    "path": _PATH,
                    "max_chars": {"type": "integer", "minimum": 1, "maximum": MAX_READ_CHARS},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
            read_file,
        ),
        Tool(
            "grep",
            "Find the lines containing a text in the workspace's files (case-insensitive).",
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "minLength": 1, "maxLength": 200},
                    "path": _PATH,
                },
                "required": ["pattern"],
                "additionalProperties": False,
            },
            grep,
        ),
    ]
