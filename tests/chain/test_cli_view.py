"""`eko chat` prints one line per chain stage under a reflexive answer, nothing otherwise."""

from __future__ import annotations

import io

from rich.console import Console

from eko.chain.cli_view import print_chain, stage_lines

META = {
    "complexity": {"mode": "reflexive", "rule": "keyword:analyse"},
    "chain": {
        "turns": 4,
        "chain": [
            {
                "node": "OL1",
                "model": "qwen",
                "turns": 2,
                "tools_used": [{"name": "list_dir"}],
                "duration_ms": 1200.4,
                "stop_reason": "repeated_call",
            },
            {
                "node": "M2",
                "model": "big",
                "turns": 1,
                "tools_used": [],
                "duration_ms": 800,
                "stop_reason": "answered",
            },
        ],
        "skipped": [{"node": "M1", "reason": "offline"}],
    },
}


def test_one_line_per_stage() -> None:
    assert stage_lines(META) == [
        "OL1 · qwen · 2 turns · tools: list_dir · 1200 ms · stopped: repeated_call",
        "M2 · big · 1 turn · no tools · 800 ms",
        "M1 · skipped (offline)",
    ]


def test_nothing_under_a_simple_answer() -> None:
    assert stage_lines({"complexity": {"mode": "simple", "rule": "short"}}) == []
    assert stage_lines({}) == []


def test_a_chain_fallback_says_so() -> None:
    meta = {**META, "complexity": {"mode": "reflexive", "rule": "long", "chain_fallback": True}}
    assert stage_lines(meta)[-1] == "chain gave no reply: answered by the simple path"
    broken = {**meta, "chain": {"chain": [], "skipped": [], "fallback": "chain_error"}}
    assert stage_lines(broken) == ["chain failed: answered by the simple path"]


def test_print_chain_writes_the_lines() -> None:
    out = io.StringIO()
    print_chain(Console(file=out, width=200), META)
    assert out.getvalue().splitlines()[0] == (
        "  ↳ OL1 · qwen · 2 turns · tools: list_dir · 1200 ms · stopped: repeated_call"
    )
