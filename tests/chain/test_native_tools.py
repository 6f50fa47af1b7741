"""Native tool calling: the `tools` field goes out, `tool_calls` come back as the text format."""

from __future__ import annotations

import json
from typing import Any

import httpx

from eko.chain.native_tools import NativeToolsProvider, calls_as_text, openai_tools
from eko.chain.runner import ChainRunner, Stage
from eko.chain.tool_calls import parse_output
from eko.chain.tools import ToolContext, ToolRegistry
from eko.chain.tools.registry import Tool
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary
from eko_bench.chain_scripts import context


async def _noop(_context: ToolContext, args: dict[str, Any]) -> Any:
    return args


REGISTRY = ToolRegistry.of(
    [
        Tool(
            "list_dir",
            "List a folder.",
            {"type": "object", "properties": {"path": {"type": "string"}}},
            _noop,
        )
    ]
)


def _upstream(bodies: list[dict[str, Any]], *messages: dict[str, Any]) -> httpx.MockTransport:
    """Answers with `messages` in turn (the last one again once they are used up)."""

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        message = messages[min(len(bodies), len(messages)) - 1]
        return httpx.Response(
            200,
            json={
                "model": "m",
                "choices": [{"message": message, "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3},
            },
        )

    return httpx.MockTransport(handler)


async def test_tools_are_sent_and_tool_calls_read_back_as_text() -> None:
    bodies: list[dict[str, Any]] = []
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "list_dir", "arguments": '{"path": "src"}'},
            }
        ],
    }
    inner = OpenAICompatProvider(
        base_url="http://upstream/v1", model="m", transport=_upstream(bodies, message)
    )
    runtime = LLMRuntime([NativeToolsProvider(inner, openai_tools(REGISTRY))])
    completion = await runtime.complete([ChatMessage("user", "list src")], purpose="chain.OL1")
    await inner.aclose()
    assert bodies[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "list_dir",
                "description": "List a folder.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    calls = parse_output(completion.text).calls
    assert [(c.name, c.args) for c in calls] == [("list_dir", {"path": "src"})]


async def test_a_plain_answer_passes_through_and_no_tools_means_no_field() -> None:
    bodies: list[dict[str, Any]] = []
    inner = OpenAICompatProvider(
        base_url="http://upstream/v1",
        model="m",
        transport=_upstream(bodies, {"role": "assistant", "content": "hello"}),
    )
    wrapped = NativeToolsProvider(inner, ())
    runtime = LLMRuntime([wrapped])
    completion = await runtime.complete([ChatMessage("user", "hi")], purpose="chain.M1")
    await inner.aclose()
    assert completion.text == "hello"
    assert "tools" not in bodies[0]


def test_bad_native_arguments_become_an_error_call() -> None:
    text = calls_as_text(
        (
            {"function": {"name": "list_dir", "arguments": "{not json"}},
            {"function": {"name": "list_dir", "arguments": "[1]"}},
            {"function": {"arguments": "{}"}},
            {"nothing": True},
        )
    )
    calls = parse_output(text).calls
    assert [c.name for c in calls] == ["list_dir", "list_dir"]
    assert all(c.error for c in calls)


async def test_a_fourth_native_call_is_answered_with_an_error_the_model_sees() -> None:
    bodies: list[dict[str, Any]] = []
    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "list_dir", "arguments": a}}
        for n, a in enumerate(('{"path": "a"}', '{"path": "b"}', '{"path": "c"}', '{"path": "d"}'))
    ]
    inner = OpenAICompatProvider(
        base_url="http://upstream/v1",
        model="m",
        transport=_upstream(
            bodies,
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "assistant", "content": "Four folders."},
        ),
    )
    stage = Stage(
        "OL1", "research", 4, LLMRuntime([NativeToolsProvider(inner, openai_tools(REGISTRY))])
    )
    result = await ChainRunner(stages=[stage], tools=REGISTRY, prompts=PromptLibrary()).run(
        "q", context()
    )
    await inner.aclose()
    used = result.stages[0].tools_used
    assert [(r.args["path"], r.ok) for r in used] == [
        ("a", True),
        ("b", True),
        ("c", True),
        ("d", False),
    ]
    told = bodies[1]["messages"][-1]["content"]
    assert "ERROR list_dir: not run: at most 3 tool calls per answer" in told
    assert result.reply == "Four folders."
