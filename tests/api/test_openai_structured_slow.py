"""The bundled local model (in-process llama.cpp) answering an OpenAI client's json_schema
request and tools through a running Eko: held by its grammar, the reply is valid JSON of the
schema, and the tool call names a tool with arguments of its parameters."""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import openai
import pytest

from eko.llm.errors import InvalidOutput
from eko.llm.providers import FunctionModel, LocalLlamaProvider, resolve_default_model_path
from eko.llm.types import ProviderRequest
from tests.chat.helpers import orchestrator_json
from tests.llama_threads import llama_threads

from .live_server import running_eko

pytestmark = pytest.mark.slow

CITY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "country": {"type": "string", "maxLength": 20},
    },
    "required": ["name", "country"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 20}},
            "required": ["city"],
        },
    },
}


def router_only() -> FunctionModel:
    """Answers the orchestrator's JSON (fast); refuses the writer's call, which falls back to
    the local model."""

    def answer(request: ProviderRequest) -> str:
        if request.caller_format is None and request.json_schema is not None:
            return orchestrator_json("small_talk")
        raise InvalidOutput("router-only", "writes no replies")

    return FunctionModel(answer, name="router-only")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_the_local_model_gives_json_of_the_schema_and_a_tool_call(database_url: str) -> None:
    local = LocalLlamaProvider(resolve_default_model_path(), n_ctx=4096, n_threads=llama_threads())
    # Generous bounds: CI shares 2 cores; this test checks the path and the JSON, not speed.
    with running_eko(
        database_url,
        [router_only(), local],
        llm_max_tokens=64,
        chat_message_deadline_s=1800,
        chat_writer_timeout_s=900,
    ) as eko:
        # Typed loosely: the tools are plain dicts, not the SDK's TypedDicts.
        api: Any = openai.OpenAI(
            base_url=f"{eko.url}/v1", api_key=eko.key, max_retries=0, timeout=600
        )
        city = api.chat.completions.create(
            model="eko",
            messages=[{"role": "user", "content": "Name one big city in Japan."}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "city", "schema": CITY, "strict": True},
            },
        )
        value = json.loads(city.choices[0].message.content or "")
        assert jsonschema_rs.validator_for(CITY).is_valid(value), value

        called = api.chat.completions.create(
            model="eko",
            messages=[{"role": "user", "content": "What is the weather in Paris right now?"}],
            tools=[WEATHER_TOOL],
            tool_choice="required",
        )
        choice = called.choices[0]
        assert choice.finish_reason == "tool_calls"
        [call] = choice.message.tool_calls or []
        assert call.function.name == "get_weather"
        arguments = json.loads(call.function.arguments)
        assert isinstance(arguments.get("city"), str) and arguments["city"]
