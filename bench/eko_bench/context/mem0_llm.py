"""Eko's LLM runtime as a mem0 `LLMBase`, for mem0's extraction mode in `eko bench context`.

mem0 asks its model for a JSON object (`response_format={"type": "json_object"}`) in the
shape its extraction prompt describes ({"memory": [{"id", "text", "attributed_to"}]}); the
runtime is asked for that schema (a local model is held to it by grammar, a remote one is
sent it), with temperature 0, and mem0 parses the text itself. Tools are not used by the
extraction path and are refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, Role

# The answer's length: a session gives mem0's prompt 5-15 facts of 15-80 words.
MAX_TOKENS = 1024
PURPOSE = "bench.mem0.extraction"


class Mem0Fact(BaseModel):
    id: str
    text: str
    attributed_to: str


class Mem0Extraction(BaseModel):
    """mem0's extraction answer (ADDITIVE_EXTRACTION_PROMPT, "OUTPUT FORMAT")."""

    memory: list[Mem0Fact]


def as_messages(messages: Sequence[dict[str, Any]]) -> list[ChatMessage]:
    """mem0's chat messages as Eko's (a role Eko has no name for is sent as the user's)."""
    roles: dict[str, Role] = {"system": "system", "user": "user", "assistant": "assistant"}
    return [
        ChatMessage(roles.get(str(m.get("role")), "user"), str(m.get("content", "")))
        for m in messages
    ]


def runtime_llm(runtime: LLMRuntime, loop: asyncio.AbstractEventLoop) -> Any:
    """`runtime` as a mem0 LLMBase, asked from mem0's worker thread on `loop` (where the
    runtime lives); the class is made here because mem0 is an optional import."""
    from mem0.llms.base import LLMBase

    class BenchLLM(LLMBase):
        def generate_response(
            self,
            messages: list[dict[str, Any]],
            response_format: Any = None,
            tools: Any = None,
            tool_choice: str = "auto",
            **_: Any,
        ) -> str:
            if tools:
                raise NotImplementedError("the bench's mem0 model takes no tools")
            asked = _answer(runtime, as_messages(messages), structured=bool(response_format))
            return asyncio.run_coroutine_threadsafe(asked, loop).result()

    return BenchLLM()


async def _answer(runtime: LLMRuntime, messages: list[ChatMessage], *, structured: bool) -> str:
    """The runtime's text: held to mem0's answer schema when mem0 asked for JSON."""
    output = Mem0Extraction if structured else None
    completion = await runtime.complete(
        messages,
        output=output,
        purpose=PURPOSE,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        priority="background",
    )
    return completion.text
