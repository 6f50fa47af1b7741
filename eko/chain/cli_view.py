"""`eko chat`: one line per chain stage under a reflexive answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape


def stage_lines(meta: Mapping[str, Any]) -> list[str]:
    """`OL1 · model · 2 turns · tools: list_dir, read_file · 1200 ms` per stage that ran, then
    the skipped ones; nothing for a simple answer."""
    complexity = meta.get("complexity") or {}
    chain = meta.get("chain")
    if complexity.get("mode") != "reflexive" or not isinstance(chain, Mapping):
        return []
    lines = []
    for stage in chain.get("chain") or []:
        tools = [str(tool.get("name")) for tool in stage.get("tools_used") or []]
        turns = int(stage.get("turns") or 0)
        parts = [
            str(stage.get("node")),
            str(stage.get("model")),
            f"{turns} turn{'s' if turns != 1 else ''}",
            f"tools: {', '.join(tools)}" if tools else "no tools",
            f"{round(float(stage.get('duration_ms') or 0))} ms",
        ]
        reason = stage.get("stop_reason")
        if reason not in (None, "answered"):
            parts.append(f"stopped: {reason}")
        lines.append(" · ".join(parts))
    for skipped in chain.get("skipped") or []:
        lines.append(f"{skipped.get('node')} · skipped ({skipped.get('reason')})")
    if complexity.get("chain_fallback"):
        failed = chain.get("fallback") == "chain_error"
        lines.append(
            f"chain {'failed' if failed else 'gave no reply'}: answered by the simple path"
        )
    return lines


def print_chain(console: Console, meta: Mapping[str, Any]) -> None:
    for line in stage_lines(meta):
        console.print(f"[dim]  ↳ {escape(line)}[/]")
