"""The OpenAI clients people point at Eko, used as their users would, against a running Eko
(real sockets), on both backends: LangChain's ChatOpenAI, Simon Willison's `llm` CLI (a
subprocess, configured through extra-openai-models.yaml) and pydantic-ai. The model is the
scripted one of openai_clients_model.py; what it received is asserted. The table of
docs/openai-clients.md names these tests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from eko.llm.types import ProviderRequest

from .live_server import LiveEko, running_eko
from .openai_clients_model import client_model


class City(BaseModel):
    name: str
    population: int


def seen(request: ProviderRequest) -> str:
    return " ".join(m.content for m in request.messages if m.role != "system")


def system_of(request: ProviderRequest) -> str:
    return request.messages[0].content


def rooms(eko: LiveEko) -> list[str]:
    return [r["id"] for r in httpx.get(f"{eko.url}/v1/rooms", headers=eko.headers).json()]


# --- LangChain -------------------------------------------------------------------------------


def langchain(eko: LiveEko) -> ChatOpenAI:
    return ChatOpenAI(model="eko", base_url=f"{eko.url}/v1", api_key=eko.key, max_retries=0)


def test_langchain_invoke_stream_structured_and_tools(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        chat = langchain(eko)
        reply = chat.invoke([SystemMessage("Réponds en pirate."), HumanMessage("Salut")])
        assert reply.content == "Vu: Salut"
        assert "Réponds en pirate." in system_of(calls[-1])

        # Multi-turn: the earlier turns reach the model.
        streamed = "".join(
            str(chunk.content)
            for chunk in chat.stream(
                [
                    HumanMessage("Je m'appelle Zorglub42"),
                    reply,
                    HumanMessage("Comment je m'appelle ?"),
                ]
            )
        )
        assert streamed == "Vu: Comment je m'appelle ?"
        assert "Zorglub42" in seen(calls[-1])

        city = chat.with_structured_output(City).invoke("Une grande ville ?")
        assert city == City(name="Paris", population=42)
        assert calls[-1].caller_format is not None
        assert calls[-1].caller_format.kind == "json_schema"

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f"18 °C à {city}"

        asked = chat.bind_tools([get_weather]).invoke("Quel temps à Paris ?")
        assert [(c["name"], c["args"]) for c in asked.tool_calls] == [
            ("get_weather", {"city": "Paris"})
        ]


# --- llm (Simon Willison's CLI) --------------------------------------------------------------


def llm_cli(eko: LiveEko, home: Path, *args: str) -> str:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("llm")), *args],
        env={**os.environ, "LLM_USER_PATH": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def configured_llm(eko: LiveEko, home: Path) -> Path:
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        "- model_id: eko\n"
        "  model_name: eko\n"
        f"  api_base: {eko.url}/v1\n"
        "  api_key_name: eko\n"
        "  supports_schema: true\n"
        "  supports_tools: true\n"
    )
    (home / "keys.json").write_text(json.dumps({"eko": eko.key}))
    return home


def test_llm_cli_system_continue_and_schema(database_url: str, tmp_path: Path) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        home = configured_llm(eko, tmp_path / "llm")
        assert llm_cli(eko, home, "-m", "eko", "-s", "Sois bref.", "Je suis Zorglub42") == (
            "Vu: Je suis Zorglub42"
        )
        assert "Sois bref." in system_of(calls[-1])
        # -c: the second prompt continues the first conversation, in the same room.
        assert llm_cli(eko, home, "-c", "Qui suis-je ?") == "Vu: Qui suis-je ?"
        assert "Zorglub42" in seen(calls[-1])
        assert len(rooms(eko)) == 1

        out = llm_cli(eko, home, "-m", "eko", "--schema", "name, population int", "Une ville")
        assert json.loads(out) == {"name": "Paris", "population": 42}
        assert len(rooms(eko)) == 2  # a new conversation, a new room


# --- pydantic-ai -----------------------------------------------------------------------------


def pydantic_model(eko: LiveEko) -> OpenAIChatModel:
    provider = OpenAIProvider(base_url=f"{eko.url}/v1", api_key=eko.key)
    return OpenAIChatModel("eko", provider=provider)


def test_pydantic_ai_structured_output_and_a_tool(database_url: str) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls)]) as eko:
        model = pydantic_model(eko)
        result = Agent(model, output_type=City, instructions="Sois précis.").run_sync(
            "Une grande ville ?"
        )
        assert result.output == City(name="Paris", population=42)
        assert "Sois précis." in system_of(calls[-1])

        ran: list[str] = []
        agent = Agent(model)

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            ran.append(city)
            return f"18 °C à {city}"

        answer = agent.run_sync("Quel temps à Paris ?")
        # The agent called the tool, sent its result, and got the final answer from it.
        assert ran == ["Paris"]
        assert "18 °C à Paris" in answer.output
        assert "[tool result" in seen(calls[-1]) and "18 °C à Paris" in seen(calls[-1])
        assert len(rooms(eko)) == 2  # the tool's round trip stayed in its conversation's room


@pytest.mark.parametrize("native", [True, False], ids=["native", "grammar"])
async def test_parallel_agents_with_tools_never_see_each_other(
    database_url: str, native: bool
) -> None:
    calls: list[ProviderRequest] = []
    with running_eko(database_url, [client_model(calls, native=native)]) as eko:
        model = pydantic_model(eko)
        agent = Agent(model)

        @agent.tool_plain
        def lookup(city: str) -> str:
            """Facts about a city."""
            return f"facts about {city}"

        alpha, beta = await asyncio.gather(
            agent.run("alpha: parle-moi de Paris"), agent.run("beta: parle-moi de Paris")
        )
        assert "facts about Paris" in alpha.output and "facts about Paris" in beta.output
        assert len(rooms(eko)) == 2
        assert len(calls) == 4
        for request in calls:
            text = seen(request)
            assert ("alpha" in text) != ("beta" in text), text
