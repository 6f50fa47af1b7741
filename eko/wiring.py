"""Composition root: builds every service from Settings and hands them to the API or the CLI.

Nothing else constructs long-lived objects; tests pass their own providers or embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eko.chat.background import BackgroundTasks
from eko.chat.reply import ReplyWriter
from eko.chat.service import ChatService
from eko.config import Settings
from eko.embed import Embedder, build_embedder
from eko.llm.providers import build_providers
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.llm_calls import DatabaseCallRecorder
from eko.store.vectors import VectorIndex, build_vector_index


@dataclass
class Services:
    settings: Settings
    database: Database
    prompts: PromptLibrary
    providers: Sequence[Provider]
    runtime: LLMRuntime
    embedder: Embedder
    vectors: VectorIndex
    chat: ChatService
    background: BackgroundTasks

    async def aclose(self) -> None:
        await self.background.drain()
        for provider in self.providers:
            await provider.aclose()
        await self.database.dispose()


def build_services(
    settings: Settings,
    *,
    providers: Sequence[Provider] | None = None,
    embedder: Embedder | None = None,
    database: Database | None = None,
) -> Services:
    database = database or Database(settings.database_url)
    prompts = PromptLibrary()
    providers = list(providers) if providers is not None else build_providers(settings)
    runtime = LLMRuntime(
        providers,
        DatabaseCallRecorder(database),
        debug_dump_prompts=settings.debug_dump_prompts,
        default_max_tokens=settings.llm_max_tokens,
        default_temperature=settings.llm_temperature,
        assistant_name=settings.assistant_name,
    )
    embedder = embedder or build_embedder(settings)
    writer = ReplyWriter(database=database, runtime=runtime, prompts=prompts, settings=settings)
    background = BackgroundTasks()
    chat = ChatService(database=database, writer=writer, settings=settings, background=background)
    return Services(
        settings=settings,
        database=database,
        prompts=prompts,
        providers=providers,
        runtime=runtime,
        embedder=embedder,
        vectors=build_vector_index(database, settings),
        chat=chat,
        background=background,
    )
