"""`eko bench chain`: the reflexive chain with anti-loop v2 against the seed's "before".

Scripted models (no real model, deterministic): a model that loops (the same list_dir call
every turn, the seed's bug), one that wanders (a new unknown tool every turn), a chain whose
M1 is offline, and one whose every stage is the same looping small model. For each: turns used,
model calls, tool calls run, whether a reply came back, and why the stages stopped — for the
chain (budgets 4/3/2, global cap 8, a repeated call stops its stage) and for a single model in
a loop capped at 15 turns whose anti-loop only stops 3 identical failures in a row (before).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from eko.chain.antiloop import call_hash
from eko.chain.tool_calls import parse_output
from eko.chain.tools import ToolRegistry, build_tools
from eko.config import Settings
from eko.llm.errors import LLMError
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko_bench.chain_scripts import (
    answering,
    chain,
    context,
    looping,
    model,
    offline,
    wandering,
)

BEFORE_MAX_TURNS = 15
BEFORE_MAX_SAME_FAIL = 3
QUESTION = "What is in the workspace, and what does the README say?"
Script = Callable[[], tuple[Any, Any, Any]]

SCENARIOS: dict[str, Script] = {
    "loop (OL1 repeats list_dir)": lambda: (
        looping,
        answering("Analysis: the workspace holds README.md."),
        answering("The workspace holds one file, README.md."),
    ),
    "wander (unknown tools)": lambda: (wandering(), wandering(), wandering()),
    "offline (M1 down)": lambda: (
        answering("Facts: README.md describes Eko."),
        offline,
        answering("README.md describes Eko, a chat assistant."),
    ),
    "same small model loops everywhere": lambda: (looping, looping, looping),
}


@dataclass(frozen=True, slots=True)
class Row:
    scenario: str
    design: str
    turns: int
    model_calls: int
    tool_calls: int
    reply: bool
    stops: str


async def single_loop(provider: FunctionModel, tools: ToolRegistry) -> Row:
    """The seed's before: one model, up to 15 turns, stopped only by 3 identical failures."""
    runtime = LLMRuntime([provider])
    messages = [ChatMessage("system", "Answer the question; tools:\n" + tools.describe())]
    messages.append(ChatMessage("user", QUESTION))
    turns = tool_calls = same_fail = 0
    last_fail: str | None = None
    reply = False
    stop = "turn_cap"
    while turns < BEFORE_MAX_TURNS:
        turns += 1
        try:
            completion = await runtime.complete(messages, purpose="bench.before")
        except LLMError:
            stop = "model_failed"
            break
        parsed = parse_output(completion.text)
        if not parsed.calls:
            reply, stop = bool(parsed.text), "answered"
            break
        messages.append(ChatMessage("assistant", completion.text))
        results = []
        for call in parsed.calls:
            tool_calls += 1
            result = await tools.call(context(), call.name, call.args)
            results.append(result.for_model())
            digest = call_hash(call.name, call.args)
            same_fail = same_fail + 1 if not result.ok and digest == last_fail else 0
            last_fail = digest if not result.ok else None
        messages.append(ChatMessage("user", "\n".join(results)))
        if same_fail + 1 >= BEFORE_MAX_SAME_FAIL:
            stop = "same_fail"
            break
    return Row(
        "", "before: 1 model, 15 turns", turns, len(provider.requests), tool_calls, reply, stop
    )


async def chain_row(script: Script, workspace: Path) -> Row:
    ol1, m1, m2 = (model(fn, name) for fn, name in zip(script(), ("ol1", "m1", "m2"), strict=True))
    result = await chain(ol1, m1, m2, workspace=workspace).run(QUESTION, context())
    stops = ", ".join(f"{s.node}:{s.stop_reason or s.status}" for s in result.stages)
    return Row(
        "",
        "chain OL1→M1→M2 (4/3/2, cap 8)",
        result.turns,
        sum(len(p.requests) for p in (ol1, m1, m2)),
        sum(len(s.tools_used) for s in result.stages),
        result.reply is not None,
        stops,
    )


async def measure() -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "README.md").write_text("Eko is a chat assistant.\n", encoding="utf-8")
        tools = build_tools(workspace=workspace)
        for name, script in SCENARIOS.items():
            before = await single_loop(model(script()[0], "single"), tools)
            after = await chain_row(script, workspace)
            rows += [_named(before, name), _named(after, name)]
    return rows


def _named(row: Row, scenario: str) -> Row:
    return dataclasses.replace(row, scenario=scenario)


def table(rows: list[Row]) -> Table:
    out = Table(title="eko bench chain — scripted models, anti-loop v2 vs the 15-turn loop")
    for column in ("scenario", "design", "turns", "model calls", "tool calls", "reply", "stops"):
        out.add_column(column, justify="right" if column in ("turns", "model calls") else "left")
    for row in rows:
        out.add_row(
            row.scenario,
            row.design,
            str(row.turns),
            str(row.model_calls),
            str(row.tool_calls),
            "yes" if row.reply else "no",
            row.stops,
        )
    return out


async def run(*, settings: Settings, console: Console) -> list[Row]:
    rows = await measure()
    console.print(table(rows))
    return rows
