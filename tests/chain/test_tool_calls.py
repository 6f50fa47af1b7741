"""The text format `[TOOL:name:{json args}]`: tolerant of small-model slips, strict on names."""

from __future__ import annotations

from typing import Any

import pytest

from eko.chain.tool_calls import parse_output, render_call


@pytest.mark.parametrize(
    ("output", "name", "args"),
    [
        ('[TOOL:list_dir:{"path": "."}]', "list_dir", {"path": "."}),
        ("[TOOL:list_dir:{'path': 'src'}]", "list_dir", {"path": "src"}),
        ('[TOOL: read_file : {"path": "a.txt"} ]', "read_file", {"path": "a.txt"}),
        ('[tool:grep:{"pattern": "x"}]', "grep", {"pattern": "x"}),
        ('Let me look. [TOOL:list_dir:{"path": "."}] then I will read.', "list_dir", {"path": "."}),
        ('[TOOL:list_dir:{"path": "."}', "list_dir", {"path": "."}),
        ('[TOOL:list_dir:{"path": "."', "list_dir", {"path": "."}),
        ('[TOOL:list_dir:{"path": "."] and more', "list_dir", {"path": "."}),
        ("[TOOL:list_dir]", "list_dir", {}),
        ("[TOOL:list_dir:]", "list_dir", {}),
        ("[TOOL:list_dir:{}]", "list_dir", {}),
        (
            '[TOOL:search_memories:{query: "cat", k: 2}]',
            "search_memories",
            {"query": "cat", "k": 2},
        ),
        ('[TOOL:grep:{"pattern": "x",}]', "grep", {"pattern": "x"}),
        ("[TOOL:t:{'flag': True, 'none': None}]", "t", {"flag": True, "none": None}),
        ('[TOOL:t:{"a": {"b": [1, 2]}}]', "t", {"a": {"b": [1, 2]}}),
        ('[TOOL:grep:{"pattern": "a}b"}]', "grep", {"pattern": "a}b"}),
        ('```\n[TOOL:list_dir:{"path": "."}]\n```', "list_dir", {"path": "."}),
        (
            '<think>maybe [TOOL:x:{}]</think>[TOOL:list_dir:{"path": "."}]',
            "list_dir",
            {"path": "."},
        ),
    ],
)
def test_slips_are_forgiven(output: str, name: str, args: dict[str, Any]) -> None:
    parsed = parse_output(output)
    assert len(parsed.calls) == 1
    call = parsed.calls[0]
    assert (call.name, call.args, call.error) == (name, args, None)


@pytest.mark.parametrize(
    ("output", "name"),
    [
        ('[TOOL:List_Dir:{"path": "."}]', "List_Dir"),
        ('[TOOL:move_file:{"src": "a"}]', "move_file"),
        ("[TOOL:ls:{}]", "ls"),
    ],
)
def test_the_name_is_taken_as_written(output: str, name: str) -> None:
    assert parse_output(output).calls[0].name == name


@pytest.mark.parametrize(
    "output",
    [
        "[TOOL:read_file:README.md]",
        "[TOOL:read_file:{path=README.md}]",
        '[TOOL:read_file:["a"]]',
        "[TOOL:read_file {path: 'x'}]",
        "[TOOL:read_file:{'path': }]",
    ],
)
def test_unreadable_arguments_are_an_error_call(output: str) -> None:
    parsed = parse_output(output)
    assert len(parsed.calls) == 1
    assert parsed.calls[0].name == "read_file"
    assert parsed.calls[0].error


def test_a_bare_value_is_kept_for_the_registry() -> None:
    assert parse_output("[TOOL:read_file:README.md]").calls[0].bare == "README.md"
    assert parse_output("[TOOL:read_file:'notes.txt']").calls[0].bare == "notes.txt"
    assert parse_output("[TOOL:read_file:[1]]").calls[0].bare == "[1"
    assert parse_output('[TOOL:read_file:{"path": 1}]').calls[0].bare is None


@pytest.mark.parametrize(
    "output",
    [
        "No tools needed, here is the answer.",
        "[TOOL:]",
        "[TOOL: :{}]",
        "[TOOL:123:{}]",
        "TOOL:list_dir:{}",
        "",
    ],
)
def test_no_call_without_a_valid_marker_and_name(output: str) -> None:
    assert parse_output(output).calls == []


def test_text_around_calls_is_kept() -> None:
    parsed = parse_output('I check.  [TOOL:list_dir:{"path": "."}]  Done.')
    assert parsed.text == "I check. Done."
    assert parse_output("[TOOL:]").text == "[TOOL:]"


def test_an_unclosed_call_does_not_swallow_the_next() -> None:
    calls = parse_output('[TOOL:grep:{"pattern": \n[TOOL:list_dir:{"path": "."}]').calls
    assert [(c.name, c.error is None) for c in calls] == [("grep", False), ("list_dir", True)]


def test_several_calls_are_capped_and_the_rest_kept_apart() -> None:
    output = "".join(f'[TOOL:t:{{"n": {n}}}]' for n in range(5))
    parsed = parse_output(output, max_calls=3)
    assert [call.args["n"] for call in parsed.calls] == [0, 1, 2]
    # Past the limit: not to be run, but not lost either (the runner answers them).
    assert [call.args["n"] for call in parsed.over_limit] == [3, 4]
    assert parsed.text == ""


def test_render_round_trips() -> None:
    text = render_call("grep", {"pattern": "x", "path": "src"})
    assert text == '[TOOL:grep:{"path": "src", "pattern": "x"}]'
    assert parse_output(text).calls[0].args == {"pattern": "x", "path": "src"}
