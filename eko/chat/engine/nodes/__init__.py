"""The built-in nodes (one module each) and the default registry holding them."""

from __future__ import annotations

from eko.chat.docs.service import DocsService
from eko.chat.engine.context_loader import ContextLoader
from eko.chat.engine.nodes.context import context_node
from eko.chat.engine.nodes.docs_chunks import docs_chunks_node
from eko.chat.engine.nodes.quota import quota_node
from eko.chat.engine.nodes.response_writer import response_writer_node
from eko.chat.engine.nodes.web_search import web_search_node
from eko.chat.engine.registry import NodeRegistry
from eko.chat.engine.writer import ResponseWriter
from eko.chat.websearch.base import WebSearchProvider
from eko.config import Settings
from eko.prompts.library import PromptLibrary
from eko.store.db import Database


def default_registry(
    *,
    settings: Settings,
    database: Database,
    prompts: PromptLibrary,
    loader: ContextLoader,
    docs: DocsService,
    web: WebSearchProvider | None,
    writer: ResponseWriter,
) -> NodeRegistry:
    """A, B, S, C and D, registered in plan order."""
    tool_timeout = settings.chat_node_timeout_s
    return NodeRegistry(
        [
            context_node(loader, timeout_s=tool_timeout),
            quota_node(prompts, timeout_s=tool_timeout),
            docs_chunks_node(
                docs, max_chars=settings.chat_writer_docs_max_chars, timeout_s=tool_timeout
            ),
            web_search_node(
                web,
                max_results=settings.web_search_max_results,
                max_chars=settings.chat_writer_web_max_chars,
                # The provider's own timeout, plus a margin for reading the answer.
                timeout_s=settings.web_search_timeout_s + 5,
            ),
            response_writer_node(writer, timeout_s=settings.chat_writer_timeout_s),
        ]
    )


__all__ = [
    "context_node",
    "default_registry",
    "docs_chunks_node",
    "quota_node",
    "response_writer_node",
    "web_search_node",
]
