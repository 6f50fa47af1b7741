"""Warm-up: read the instructions every reply starts with once, before the first person asks.

A local model reads a prompt at ~50 tokens/s on two cores, and the orchestrator's and the
writer's instructions are ~600 tokens each: without this, the first message after a start
pays for reading both (on top of loading the model). With llama.cpp's prompt cache
(EKO_LOCAL_PROMPT_CACHE_MB) a call whose prompt starts like a primed one is read from its
first new token, so priming the stable heads makes the first reply as fast as the next ones.

Only the parts that are the same for every turn are primed: the orchestrator's system prompt
up to its first per-turn placeholder, and the writer's persona and rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import structlog

from eko.chat.engine.orchestrator import COMPACT_SYSTEM_PROMPT, SYSTEM_PROMPT
from eko.chat.engine.registry import NodeRegistry
from eko.chat.engine.writer import instruction_files
from eko.llm.types import ChatMessage, Provider
from eko.prompts.library import PromptLibrary, compact_persona
from eko.prompts.templates import fill

log = structlog.get_logger("eko.chat")

# The orchestrator's first per-turn placeholder: what comes before it is the same every turn.
_FIRST_TURN_PLACEHOLDER = "{{scopes}}"


@runtime_checkable
class Primable(Protocol):
    async def prime(self, messages: Sequence[ChatMessage]) -> bool: ...


def stable_prefixes(
    prompts: PromptLibrary,
    nodes: NodeRegistry,
    *,
    persona: str,
    compact: bool = False,
    writer_compact: bool = False,
    orchestrator: bool = True,
) -> list[list[ChatMessage]]:
    """The start of the orchestrator's (`compact`: its compact contract's) and of the writer's
    (`writer_compact`: its compact instructions) prompts, as the engine builds them."""
    template = prompts.text(COMPACT_SYSTEM_PROMPT if compact else SYSTEM_PROMPT)
    head = template.split(_FIRST_TURN_PLACEHOLDER, 1)[0]
    head_text = fill(head, nodes=nodes.describe())
    writer = "\n\n".join(
        [compact_persona(prompts.persona(persona)) if writer_compact else prompts.persona(persona)]
        + [prompts.text(path) for path in instruction_files(writer_compact)]
    )
    prefixes = [[ChatMessage("system", writer)]]
    if orchestrator:  # not when routes come from rules: no orchestrator call to prime
        prefixes.insert(0, [ChatMessage("system", head_text)])
    return prefixes


async def warm_up(providers: Sequence[Provider], prefixes: Sequence[Sequence[ChatMessage]]) -> int:
    """Prime every provider that can be primed (the local model); returns prefixes primed.

    Runs at background priority: a person who asks meanwhile goes first. A failure is logged
    and ignored — warm-up only saves time."""
    primed = 0
    for provider in providers:
        if not isinstance(provider, Primable):
            continue
        for messages in prefixes:
            try:
                primed += await provider.prime(messages)
            except Exception as exc:  # an unloadable model is reported by its first real call
                log.warning("chat.warm_up.failed", provider=provider.name, error=str(exc)[:200])
                break
    if primed:
        log.info("chat.warm_up.done", prefixes=primed)
    return primed
