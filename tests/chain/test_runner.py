"""The chain with scripted models: anti-loop, budgets, offline stages, errors, timeouts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eko.llm.providers import FunctionModel
from eko_bench.chain_scripts import (
    Calls,
    answering,
    chain,
    context,
    hanging,
    looping,
    model,
    offline,
    wandering,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("Eko is a chat assistant.\n", encoding="utf-8")
    return tmp_path


async def test_a_looping_model_stops_at_its_second_identical_call(workspace: Path) -> None:
    calls = Calls()
    runner = chain(
        model(looping, "ol1"),
        model(answering("Analysis: one file."), "m1"),
        model(answering("Final: the folder holds README.md."), "m2"),
        workspace=workspace,
        recorder=calls,
    )
    result = await runner.run("What is in the workspace?", context())
    ol1, m1, m2 = result.stages
    assert (ol1.turns, ol1.stop_reason, len(ol1.tools_used)) == (2, "repeated_call", 1)
    assert ol1.tools_used[0].result == {"path": ".", "entries": ["README.md"]}
    assert (m1.turns, m2.turns) == (1, 1)
    assert result.reply == "Final: the folder holds README.md."
    assert result.turns == 4
    assert [r.purpose for r in calls.records] == ["chain.OL1"] * 2 + ["chain.M1", "chain.M2"]
    meta = result.to_meta()
    assert meta["mode"] == "reflexive" and meta["turns"] == 4
    assert [s["node"] for s in meta["chain"]] == ["OL1", "M1", "M2"]
    assert meta["chain"][0]["tools_used"][0]["name"] == "list_dir"
    assert meta["tools_used"] == meta["chain"][0]["tools_used"]


async def test_stage_budgets_and_the_global_cap_hold() -> None:
    result = await chain(
        model(wandering(), "ol1"), model(wandering(), "m1"), model(wandering(), "m2")
    ).run("q", context())
    assert [stage.turns for stage in result.stages] == [4, 3, 1]
    assert [stage.stop_reason for stage in result.stages] == [
        "stage_budget",
        "stage_budget",
        "global_cap",
    ]
    assert result.turns == 8 and result.reply is None
    wide = await chain(
        model(wandering(), "ol1"), model(wandering(), "m1"), model(wandering(), "m2"), global_cap=9
    ).run("q", context())
    assert [stage.turns for stage in wide.stages] == [4, 3, 2]


async def test_unknown_tools_and_bad_arguments_go_back_to_the_model(workspace: Path) -> None:
    ol1 = FunctionModel.scripted(
        "[TOOL:move_file:{'src': 'a'}]",
        '[TOOL:read_file:{"file": "README.md"}]',
        '[TOOL:grep:{"pattern": 3}]',
        "Nothing found.",
        name="ol1",
        model="ol1",
    )
    result = await chain(
        ol1, model(answering("a"), "m1"), model(answering("b"), "m2"), workspace=workspace
    ).run("q", context())
    stage = result.stages[0]
    assert stage.turns == 4 and stage.stop_reason == "answered"
    errors = [result.error or "" for result in stage.tools_used]
    assert "unknown tool" in errors[0]
    assert "missing required argument 'path'" in errors[1]
    assert "argument 'pattern' must be string" in errors[2]
    second_prompt = ol1.requests[1].messages[-1].content
    assert second_prompt.startswith("ERROR move_file: unknown tool; known tools: list_dir")


async def test_an_offline_stage_is_skipped() -> None:
    m2 = model(answering("Reviewed answer."), "m2")
    result = await chain(
        model(answering("Facts: the sky is blue."), "ol1"), model(offline, "m1"), m2
    ).run("Why is the sky blue?", context())
    meta = result.to_meta()
    assert [s["node"] for s in meta["chain"]] == ["OL1", "M2"]
    assert meta["skipped"] == [{"node": "M1", "reason": "offline"}]
    assert (result.stages[1].turns, result.turns) == (0, 2)
    assert "OL1 wrote: Facts: the sky is blue." in m2.requests[0].messages[-1].content
    assert result.reply == "Reviewed answer."


async def test_a_stage_with_nothing_useful_does_not_stop_the_chain() -> None:
    m1 = model(answering("Draft."), "m1")
    result = await chain(
        model(wandering(), "ol1"), m1, model(answering("Final."), "m2"), budgets=(1, 3, 2)
    ).run("q", context())
    assert not result.stages[0].useful
    assert "(nothing useful)" not in m1.requests[0].messages[-1].content
    assert "ERROR tool_1: unknown tool" in m1.requests[0].messages[-1].content
    assert result.reply == "Final."


async def test_a_stage_timeout_ends_that_stage_only() -> None:
    result = await chain(
        model(hanging, "ol1"),
        model(answering("Draft."), "m1"),
        model(answering("Final."), "m2"),
        timeout_s=0.2,
    ).run("q", context())
    assert result.stages[0].status == "timeout"
    assert result.to_meta()["skipped"] == [{"node": "OL1", "reason": "timeout"}]
    assert result.reply == "Final."


async def test_the_reply_falls_back_to_an_earlier_stage() -> None:
    result = await chain(
        model(answering("Facts."), "ol1"), model(answering("Draft."), "m1"), model(offline, "m2")
    ).run("q", context())
    assert result.reply == "Draft."


async def test_cancellation_propagates() -> None:
    runner = chain(model(hanging, "ol1"), model(hanging, "m1"), model(hanging, "m2"))
    task = asyncio.create_task(runner.run("q", context()))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_bare_value_goes_to_the_tools_only_argument(workspace: Path) -> None:
    ol1 = FunctionModel.scripted(
        "[TOOL:read_file:README.md]",
        "[TOOL:list_dir:'.']",
        "[TOOL:read_file:a b]",
        "Done.",
        name="ol1",
        model="ol1",
    )
    result = await chain(
        ol1, model(answering("a"), "m1"), model(answering("b"), "m2"), workspace=workspace
    ).run("q", context())
    used = result.stages[0].tools_used
    assert [(r.name, r.args, r.ok) for r in used] == [
        ("read_file", {"path": "README.md"}, True),
        ("list_dir", {"path": "."}, True),
        ("read_file", {"path": "a b"}, False),
    ]


async def test_the_last_turn_asks_for_the_answer(workspace: Path) -> None:
    ol1 = model(looping, "ol1")
    m1 = model(answering("Draft."), "m1")
    await chain(
        model(wandering(), "ol1"),
        m1,
        model(answering("Final."), "m2"),
        workspace=workspace,
        budgets=(2, 1, 1),
    ).run("q", context())
    assert "This is your last turn" in m1.requests[0].messages[-1].content
    await chain(ol1, m1, model(answering("Final."), "m2"), workspace=workspace).run("q", context())
    assert "This is your last turn" not in ol1.requests[0].messages[-1].content


async def test_a_repeated_unreadable_call_is_a_repeat(workspace: Path) -> None:
    slip = "[TOOL:read_file:{'path': }]"
    ol1 = model(answering(slip), "ol1")
    result = await chain(
        ol1, model(answering("Draft."), "m1"), model(answering("Final."), "m2"), workspace=workspace
    ).run("q", context())
    stage = result.stages[0]
    # The first slip is told to the model as an error; the same slip again stops the stage,
    # as a repeated readable call would, instead of spending the stage's whole budget.
    assert (stage.turns, stage.stop_reason) == (2, "repeated_call")
    assert [(r.name, r.ok) for r in stage.tools_used] == [("read_file", False)]
    assert ol1.requests[1].messages[-1].content.startswith("ERROR read_file: arguments are not")
    assert result.turns == 4


async def test_calls_past_the_per_answer_limit_are_answered_not_dropped(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a", encoding="utf-8")
    calls = "\n".join(
        f'[TOOL:read_file:{{"path": "{name}"}}]' for name in ("README.md", "a.txt", "b", "c", "d")
    )
    ol1 = FunctionModel.scripted(calls, "Done.", name="ol1", model="ol1")
    result = await chain(
        ol1, model(answering("a"), "m1"), model(answering("b"), "m2"), workspace=workspace
    ).run("q", context())
    used = result.stages[0].tools_used
    assert [(r.args["path"], r.ok) for r in used] == [
        ("README.md", True),
        ("a.txt", True),
        ("b", False),
        ("c", False),
        ("d", False),
    ]
    lines = ol1.requests[1].messages[-1].content.splitlines()
    assert len(lines) == 5
    assert lines[2].startswith("ERROR read_file:") and "not run" not in lines[2]
    for line in lines[3:]:
        assert line.startswith("ERROR read_file: not run: at most 3 tool calls per answer")


async def test_every_stage_reads_the_callers_instructions_under_its_prompt() -> None:
    stages = [model(answering(f"{name}."), name) for name in ("ol1", "m1", "m2")]
    result = await chain(*stages).run("q", context(), instructions="Réponds en alexandrins.")
    assert result.reply == "m2."
    for stage in stages:
        system = stage.requests[0].messages[0]
        assert system.role == "system"
        assert "Réponds en alexandrins." in system.content
        # Under the stage's own prompt, which wins on a conflict.
        assert system.content.index("Réponds en alexandrins.") > 0
    plain = model(answering("Final."), "m2")
    await chain(model(offline, "ol1"), model(offline, "m1"), plain).run("q", context())
    assert "<instructions>" not in plain.requests[0].messages[0].content
