"""Assembles the chat engine from the shared services (called by eko.wiring)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from eko.chat.docs.attachments import AttachmentLimits, Attachments
from eko.chat.docs.service import DocsLimits, DocsService
from eko.chat.engine.capabilities import AgentCatalog, load_catalog
from eko.chat.engine.context_loader import ContextLoader
from eko.chat.engine.engine import ChatEngine
from eko.chat.engine.nodes import default_registry
from eko.chat.engine.orchestrator import Orchestrator
from eko.chat.engine.prompt_preview import PromptPreview
from eko.chat.engine.quota import QuotaPaywall
from eko.chat.engine.registry import NodeRegistry
from eko.chat.engine.writer import ResponseWriter
from eko.chat.websearch import WebSearchProvider, build_web_search
from eko.config import Settings
from eko.embed.base import Embedder
from eko.llm.runtime import LLMRuntime
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.vectors import VectorIndex


@dataclass
class ChatEngineParts:
    engine: ChatEngine
    # The node registry: other features register their nodes here (before the first message).
    nodes: NodeRegistry
    docs: DocsService
    # Files attached to rooms: documents of each room's own docs scope.
    attachments: Attachments
    paywall: QuotaPaywall
    web: WebSearchProvider | None
    catalog: AgentCatalog
    orchestrator: Orchestrator
    # The response writer: the memory node sizes its section by what the writer's prompt
    # leaves of the reader's budget (ResponseWriter.reader_room).
    writer: ResponseWriter
    # The writer's prompt for a message without any model call (eko bench context).
    preview: PromptPreview
    # The context loader: the chat service reads its profile rows ahead (ReadsAhead).
    loader: ContextLoader

    async def aclose(self) -> None:
        if self.web is not None:
            await self.web.aclose()


def build_chat_engine(
    *,
    settings: Settings,
    database: Database,
    runtime: LLMRuntime,
    prompts: PromptLibrary,
    embedder: Embedder,
    vectors: VectorIndex,
    web_transport: httpx.AsyncBaseTransport | None = None,
) -> ChatEngineParts:
    catalog = load_catalog(settings.chat_agent_catalog)
    docs = DocsService(
        database=database,
        vectors=vectors,
        embedder=embedder,
        limits=DocsLimits(
            max_scopes=settings.docs_max_scopes,
            max_chunks_per_scope=settings.docs_max_chunks_per_scope,
            max_chunks=settings.docs_max_chunks,
            chunk_chars=settings.docs_chunk_chars,
            chunk_overlap=settings.docs_chunk_overlap,
        ),
    )
    web = build_web_search(settings, transport=web_transport)
    loader = ContextLoader(database=database, settings=settings, catalog=catalog)
    writer = ResponseWriter(runtime=runtime, prompts=prompts, settings=settings)
    registry = default_registry(
        settings=settings,
        database=database,
        prompts=prompts,
        loader=loader,
        docs=docs,
        web=web,
        writer=writer,
    )
    orchestrator = Orchestrator(
        runtime=runtime, prompts=prompts, settings=settings, registry=registry, catalog=catalog
    )
    engine = ChatEngine(
        database=database,
        settings=settings,
        prompts=prompts,
        loader=loader,
        orchestrator=orchestrator,
        registry=registry,
    )
    return ChatEngineParts(
        engine=engine,
        nodes=registry,
        docs=docs,
        attachments=Attachments(
            database=database,
            docs=docs,
            limits=AttachmentLimits(
                max_bytes=settings.attachment_max_bytes,
                max_chars=settings.attachment_max_chars,
            ),
        ),
        paywall=QuotaPaywall(database=database, prompts=prompts),
        web=web,
        catalog=catalog,
        orchestrator=orchestrator,
        writer=writer,
        preview=PromptPreview(
            loader=loader, registry=registry, writer=writer, catalog=catalog, settings=settings
        ),
        loader=loader,
    )
