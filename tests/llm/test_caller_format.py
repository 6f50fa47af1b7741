"""An API caller's JSON and tools: what a local model is held to, what a remote one is sent,
how an answer is checked, and the runtime's one re-ask."""

from __future__ import annotations

import json

import httpx
import pytest

from eko.llm.caller_format import CallerFormat
from eko.llm.errors import AllProvidersFailed
from eko.llm.providers import FunctionModel
from eko.llm.providers.openai_compat import OpenAICompatProvider, build_payload
from eko.llm.runtime import LLMRuntime
from eko.llm.structured import StructuredOutputError
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
JSON_SCHEMA = CallerFormat(
    response_format={
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": SCHEMA, "strict": True},
    }
)
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
OTHER = {"type": "function", "function": {"name": "get_time"}}


def response(text: str = "", *calls: dict) -> ProviderResponse:
    return ProviderResponse(text=text, usage=Usage(), model="m", tool_calls=calls)


def call(name: str, arguments: str) -> dict:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_json_is_validated_against_the_callers_schema() -> None:
    read = JSON_SCHEMA.read(response('```json\n{"name": "Ada", "age": 36}\n```'))
    assert json.loads(read.text) == {"name": "Ada", "age": 36}  # the fence is gone
    with pytest.raises(StructuredOutputError, match="age"):
        JSON_SCHEMA.read(response('{"name": "Ada"}'))
    with pytest.raises(StructuredOutputError, match="not JSON"):
        JSON_SCHEMA.read(response("Ada, 36"))
    with pytest.raises(StructuredOutputError):
        CallerFormat(response_format={"type": "json_object"}).read(response("[1, 2]"))


def test_tool_calls_native_or_as_grammar_json() -> None:
    auto = CallerFormat(tools=(TOOL, OTHER), tool_choice="auto")
    native = auto.read(response("", call("get_weather", '{"city": "Paris"}')))
    assert native.tool_calls[0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    # The local model's grammar answer: a call, or a plain answer.
    grammar = auto.read(response('{"name": "get_weather", "arguments": {"city": "Lyon"}}'))
    assert grammar.text == "" and grammar.tool_calls[0]["id"].startswith("call_")
    assert json.loads(grammar.tool_calls[0]["function"]["arguments"]) == {"city": "Lyon"}
    assert auto.read(response('{"answer": "Il fait beau."}')).text == "Il fait beau."
    assert auto.read(response("Il fait beau.")).text == "Il fait beau."  # a native model's
    with pytest.raises(StructuredOutputError, match="not one of the tools"):
        auto.read(response("", call("rm_rf", "{}")))
    with pytest.raises(StructuredOutputError, match="city"):
        auto.read(response("", call("get_weather", '{"town": "Paris"}')))
    required = CallerFormat(tools=(TOOL,), tool_choice="required")
    with pytest.raises(StructuredOutputError, match="expected a tool call"):
        required.read(response("Il fait beau."))
    named = CallerFormat(
        tools=(TOOL, OTHER), tool_choice={"type": "function", "function": {"name": "get_time"}}
    )
    with pytest.raises(StructuredOutputError, match="not one of"):
        named.read(response("", call("get_weather", '{"city": "Paris"}')))


def test_the_local_grammar_schema_offers_the_tools_and_an_answer_unless_required() -> None:
    auto = CallerFormat(tools=(TOOL, OTHER), tool_choice="auto").answer_schema()
    assert [branch["properties"].get("name", {}).get("const") for branch in auto["anyOf"]] == [
        None,
        "get_weather",
        "get_time",
    ]
    named = CallerFormat(
        tools=(TOOL, OTHER), tool_choice={"type": "function", "function": {"name": "get_time"}}
    ).answer_schema()
    assert named["properties"]["name"] == {"const": "get_time"}
    assert JSON_SCHEMA.answer_schema() == SCHEMA


def test_a_remote_provider_gets_the_callers_format_as_it_came() -> None:
    messages = (ChatMessage("user", "hi"),)
    payload = build_payload(
        "gpt",
        ProviderRequest(messages, json_schema=SCHEMA, caller_format=JSON_SCHEMA),
    )
    assert payload["response_format"] == JSON_SCHEMA.response_format
    tools = CallerFormat(tools=(TOOL,), tool_choice="required")
    payload = build_payload(
        "gpt", ProviderRequest(messages, json_schema=tools.answer_schema(), caller_format=tools)
    )
    assert payload["tools"] == [TOOL] and payload["tool_choice"] == "required"
    assert "response_format" not in payload  # the grammar's schema is the local model's


async def test_the_runtime_re_asks_once_with_the_error_then_gives_up() -> None:
    model = FunctionModel.scripted('{"name": "Ada"}', '{"name": "Ada", "age": 36}')
    runtime = LLMRuntime([model])
    completion = await runtime.complete(
        [ChatMessage("user", "Who?")], purpose="writer", caller_format=JSON_SCHEMA
    )
    assert json.loads(completion.text) == {"name": "Ada", "age": 36}
    assert "age" in model.requests[1].messages[-1].content  # the correction names the error
    stubborn = FunctionModel.constant("nope")
    with pytest.raises(AllProvidersFailed):
        await LLMRuntime([stubborn]).complete(
            [ChatMessage("user", "Who?")], purpose="writer", caller_format=JSON_SCHEMA
        )
    assert len(stubborn.requests) == 2
    tools = CallerFormat(tools=(TOOL,), tool_choice="auto")
    native = FunctionModel.constant(response("", call("get_weather", '{"city": "Paris"}')))
    answered = await LLMRuntime([native]).complete(
        [ChatMessage("user", "Météo ?")], purpose="writer", caller_format=tools
    )
    assert answered.text == "" and answered.tool_calls[0]["function"]["name"] == "get_weather"


async def test_a_remote_providers_tool_calls_come_back_checked() -> None:
    sent: list[dict] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("get_weather", '{"city":"Nice"}')],
        }
        return httpx.Response(
            200,
            json={"model": "gpt", "choices": [{"message": message, "finish_reason": "tool_calls"}]},
        )

    remote = OpenAICompatProvider(
        base_url="http://upstream.test/v1", model="gpt", transport=httpx.MockTransport(upstream)
    )
    tools = CallerFormat(tools=(TOOL,), tool_choice="required")
    try:
        answered = await LLMRuntime([remote]).complete(
            [ChatMessage("user", "Météo ?")], purpose="writer", caller_format=tools
        )
    finally:
        await remote.aclose()
    assert sent[0]["tools"] == [TOOL] and sent[0]["tool_choice"] == "required"
    assert answered.tool_calls[0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Nice"}',
    }
