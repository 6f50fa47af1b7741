"""Eko's configuration: `Settings`, every EKO_* knob, composed of one typed section per concern.

    settings.py      Settings: every section, read from EKO_* variables and `.env`
    paths.py         the default data directory, the SQLite URL, masking a database password
    service.py       HTTP service and API limits      storage.py   data directory, database
    llm.py           chat providers, the local model  embed.py     the embedder
    chat.py          conversation, chat engine, docs scopes, web search
    orchestrator.py  the orchestrator                 writer.py    the response writer
    memory.py        extraction, summaries, topics, RAG over summaries
    context.py       the dual context's budget, recall over raw turns
    vectors.py       the in-memory vector index       guard.py     the memory guard
    jobs.py          background jobs                  events.py    live events
    lobby.py         the lobby's proactive side       chain.py     the reflexive chain
    accounts.py      sign-in, sessions, invitations

A component that needs one concern takes its section's type (`GuardSettings`, …); the whole
`Settings` is an instance of every section.
"""

from __future__ import annotations

from eko.config.accounts import AccountSettings
from eko.config.chain import ChainSettings
from eko.config.chat import (
    ChatEngineSettings,
    ConversationSettings,
    DocsSettings,
    WebSearchSettings,
)
from eko.config.context import ContextBudgetSettings, RecallSettings
from eko.config.embed import EmbedSettings
from eko.config.events import EventsSettings
from eko.config.guard import GuardMode, GuardSettings
from eko.config.jobs import JobsSettings
from eko.config.llm import BUNDLED_MODEL_NAMES, DEFAULT_LOCAL_MODEL, LLMSettings, ProviderConfig
from eko.config.lobby import LobbySettings
from eko.config.memory import MemorySettings
from eko.config.orchestrator import OrchestratorContract, OrchestratorSettings
from eko.config.paths import DATABASE_FILE_NAME, default_home, mask_url, sqlite_url
from eko.config.service import ServiceSettings
from eko.config.settings import Settings
from eko.config.storage import StorageSettings
from eko.config.vectors import VectorMemorySettings
from eko.config.writer import WriterSettings

__all__ = [
    "BUNDLED_MODEL_NAMES",
    "DATABASE_FILE_NAME",
    "DEFAULT_LOCAL_MODEL",
    "AccountSettings",
    "ChainSettings",
    "ChatEngineSettings",
    "ContextBudgetSettings",
    "ConversationSettings",
    "DocsSettings",
    "EmbedSettings",
    "EventsSettings",
    "GuardMode",
    "GuardSettings",
    "JobsSettings",
    "LLMSettings",
    "LobbySettings",
    "MemorySettings",
    "OrchestratorContract",
    "OrchestratorSettings",
    "ProviderConfig",
    "RecallSettings",
    "ServiceSettings",
    "Settings",
    "StorageSettings",
    "VectorMemorySettings",
    "WebSearchSettings",
    "WriterSettings",
    "default_home",
    "mask_url",
    "sqlite_url",
]
