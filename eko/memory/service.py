"""The memory layer as one object the composition root builds and the chat path consumes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eko.config import Settings
from eko.embed.base import Embedder
from eko.llm.runtime import LLMRuntime
from eko.memory.context import DualContextBuilder
from eko.memory.extraction import ExtractionHook, MemoryExtractor
from eko.memory.items import MemoryItems
from eko.memory.query_expansion import QueryExpander
from eko.memory.relevance import dedup_min_score
from eko.memory.summaries.builder import SummaryBuilder, SummaryHook
from eko.memory.summaries.reads import SummaryReader
from eko.memory.topics import Topics
from eko.memory.turn_indexer import TurnIndexHook
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.vectors import VectorIndex


@dataclass
class Memory:
    items: MemoryItems
    topics: Topics
    summaries: SummaryBuilder
    summary_reader: SummaryReader
    context: DualContextBuilder
    extractor: MemoryExtractor
    settings: Settings
    # Embeds each exchange's turns as they arrive (eko/memory/turn_indexer.py).
    turn_hook: TurnIndexHook | None = None

    def after_reply_hooks(self) -> list[Any]:
        """The AfterReply hooks to register in ChatService, per the enabled features."""
        hooks: list[Any] = []
        settings = self.settings
        if (
            self.turn_hook is not None
            and settings.memory_recall_max_chars > 0
            and settings.memory_recall_dense_k > 0
        ):
            hooks.append(self.turn_hook)
        if self.settings.memory_extraction_on:
            hooks.append(
                ExtractionHook(self.extractor, min_chars=self.settings.memory_extract_min_chars)
            )
        if self.settings.summaries_enabled:
            hooks.append(SummaryHook(self.summaries))
        return hooks


def build_memory(
    *,
    settings: Settings,
    database: Database,
    runtime: LLMRuntime,
    embedder: Embedder,
    vectors: VectorIndex,
    prompts: PromptLibrary,
    expansion_runtime: LLMRuntime | None = None,
) -> Memory:
    """`expansion_runtime`: the models asked for a question's phrases (default `runtime`; the
    context bench gives them the model while the summaries come from a stand-in)."""
    items = MemoryItems(
        database=database,
        vectors=vectors,
        embedder=embedder,
        dedup_min_score=dedup_min_score(settings, embedder),
    )
    topics = Topics(
        database=database,
        vectors=vectors,
        embedder=embedder,
        merge_min_confidence=settings.topic_merge_min_confidence,
        related_min_confidence=settings.topic_related_min_confidence,
    )
    summaries = SummaryBuilder(
        database=database,
        runtime=runtime,
        embedder=embedder,
        vectors=vectors,
        topics=topics,
        prompts=prompts,
        settings=settings,
    )
    context = DualContextBuilder(
        database=database,
        vectors=vectors,
        embedder=embedder,
        items=items,
        topics=topics,
        settings=settings,
        expander=QueryExpander(
            runtime=expansion_runtime or runtime, prompts=prompts, settings=settings
        ),
    )
    extractor = MemoryExtractor(
        database=database, runtime=runtime, items=items, prompts=prompts, settings=settings
    )
    return Memory(
        items=items,
        topics=topics,
        summaries=summaries,
        summary_reader=SummaryReader(
            database=database, vectors=vectors, embedder=embedder, topics=topics
        ),
        context=context,
        extractor=extractor,
        settings=settings,
        turn_hook=TurnIndexHook(
            database, context.indexer, cached_delay_s=settings.memory_index_cached_delay_s
        ),
    )
