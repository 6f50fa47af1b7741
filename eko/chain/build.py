"""Assembles the chain from the shared services (called by eko.chat.chain_writer).

Each stage asks a subset of the chat's runtime (`LLMRuntime.subset`): the providers named for
it in `chain_stage_providers`, or all of them. So a provider that fails in a stage has the
same circuit breaker as in the chat (the chat and background jobs see it down), and every
stage call lands in the same call log. A stage can only name a provider of `llm_providers`
(the list the runtime was built from); an unknown name is a configuration error at start-up
rather than a second copy of a provider with a breaker nobody else sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from eko.chain.classify import CATEGORIES, KEYWORDS, ComplexityRules
from eko.chain.native_tools import NativeToolsProvider, openai_tools
from eko.chain.runner import ChainRunner, Stage
from eko.chain.tools import DocsSearch, ToolRegistry, WebSearch, build_tools
from eko.config import Settings
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.memory.service import Memory
from eko.prompts.library import PromptLibrary

# node, prompt file, settings field of its budget
STAGES = (
    ("OL1", "research", "chain_budget_ol1"),
    ("M1", "analysis", "chain_budget_m1"),
    ("M2", "review", "chain_budget_m2"),
)


def complexity_rules(settings: Settings) -> ComplexityRules:
    return ComplexityRules(
        short_chars=settings.chain_short_chars,
        long_chars=settings.chain_long_chars,
        keywords=KEYWORDS + tuple(settings.chain_extra_keywords),
        categories=CATEGORIES + tuple(settings.chain_extra_categories),
    )


def stage_providers(settings: Settings, providers: Sequence[Provider], node: str) -> list[Provider]:
    """The stage's provider by name (`chain_stage_providers`), else every provider in order."""
    wanted = settings.chain_stage_providers.get(node)
    if wanted is None:
        return list(providers)
    chosen = [provider for provider in providers if provider.name == wanted]
    if not chosen:
        names = ", ".join(provider.name for provider in providers)
        raise ValueError(f"chain stage {node}: no provider named {wanted!r} (have: {names})")
    return chosen


def build_chain(
    *,
    settings: Settings,
    runtime: LLMRuntime,
    prompts: PromptLibrary,
    memory: Memory | None = None,
    docs: DocsSearch | None = None,
    web: WebSearch | None = None,
    tools: ToolRegistry | None = None,
) -> ChainRunner:
    if tools is None:
        tools = build_tools(
            items=memory.items if memory is not None else None,
            summaries=memory.summary_reader if memory is not None else None,
            docs=docs,
            web=web,
            web_max_results=settings.web_search_max_results,
            workspace=settings.chain_workspace,
        )
    native = openai_tools(tools) if settings.chain_native_tools and tools.names else ()

    def with_native_tools(provider: Provider) -> Provider:
        if native and isinstance(provider, OpenAICompatProvider):
            return NativeToolsProvider(provider, native)
        return provider

    stages = []
    for node, prompt, budget_field in STAGES:
        chosen = stage_providers(settings, runtime.providers, node)
        stage_runtime = runtime.subset(chosen, adapt=with_native_tools)
        stages.append(
            Stage(
                node=node,
                prompt=prompt,
                budget=int(getattr(settings, budget_field)),
                runtime=stage_runtime,
                timeout_s=settings.chain_stage_timeout_s,
                max_tokens=settings.chain_max_tokens,
            )
        )
    return ChainRunner(
        stages=stages, tools=tools, prompts=prompts, global_cap=settings.chain_global_cap
    )
