"""Scripted chain models (loop, wander, offline, hang) and a chain to run them: used by
`eko bench chain` and the chain tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eko.chain.runner import ChainRunner, Stage
from eko.chain.tools import ToolContext, build_tools
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.runtime import LLMRuntime
from eko.llm.types import CallRecorder, LLMCallRecord, ProviderRequest
from eko.prompts.library import PromptLibrary
from eko.store.models import Room, User


class Calls:
    """A CallRecorder keeping every llm_calls record."""

    def __init__(self) -> None:
        self.records: list[LLMCallRecord] = []

    async def record(self, call: LLMCallRecord) -> None:
        self.records.append(call)


def looping(request: ProviderRequest) -> str:
    return '[TOOL:list_dir:{"path": "."}]'


def wandering() -> Callable[[ProviderRequest], str]:
    count = {"n": 0}

    def answer(request: ProviderRequest) -> str:
        count["n"] += 1
        return f"[TOOL:tool_{count['n']}:{{}}]"

    return answer


def answering(text: str) -> Callable[[ProviderRequest], str]:
    return lambda request: text


def offline(request: ProviderRequest) -> str:
    raise ProviderUnavailable("m1", "connection refused")


async def hanging(request: ProviderRequest) -> str:
    await asyncio.sleep(30)
    return "late"


def model(function: Any, name: str) -> FunctionModel:
    return FunctionModel(function, name=name, model=name)


def context() -> ToolContext:
    return ToolContext(
        user=User(id="u1", public_id="pu1"), room=Room(id="r1", kind="direct"), message_id="m1"
    )


def chain(
    ol1: FunctionModel,
    m1: FunctionModel,
    m2: FunctionModel,
    *,
    workspace: Path | None = None,
    recorder: CallRecorder | None = None,
    global_cap: int = 8,
    budgets: tuple[int, int, int] = (4, 3, 2),
    timeout_s: float = 10.0,
) -> ChainRunner:
    # One runtime, one subset per stage, as the chat builds it (eko/chain/build.py).
    runtime = LLMRuntime([ol1, m1, m2], recorder)
    stages = [
        Stage(node, prompt, budget, runtime.subset([provider]), timeout_s=timeout_s)
        for node, prompt, budget, provider in zip(
            ("OL1", "M1", "M2"),
            ("research", "analysis", "review"),
            budgets,
            (ol1, m1, m2),
            strict=True,
        )
    ]
    return ChainRunner(
        stages=stages,
        tools=build_tools(workspace=workspace),
        prompts=PromptLibrary(),
        global_cap=global_cap,
    )
