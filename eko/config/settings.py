"""Every knob of Eko in one pydantic-settings class, composed of one typed section per concern
(the modules beside this one): EKO_* environment variables and `.env`.

Settings inherits every section, so a field reads from EKO_<FIELD NAME> whatever its section,
and a component can ask for its own section only (`GuardSettings`, `EmbedSettings`, …): the
whole Settings is one.
"""

from __future__ import annotations

from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

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
from eko.config.guard import GuardSettings
from eko.config.jobs import JobsSettings
from eko.config.llm import LLMSettings
from eko.config.lobby import LobbySettings
from eko.config.memory import MemorySettings
from eko.config.orchestrator import OrchestratorSettings
from eko.config.paths import mask_url
from eko.config.service import ServiceSettings
from eko.config.storage import StorageSettings
from eko.config.vectors import VectorMemorySettings
from eko.config.writer import WriterSettings


class Settings(
    AccountSettings,
    LobbySettings,
    ChainSettings,
    RecallSettings,
    ContextBudgetSettings,
    VectorMemorySettings,
    GuardSettings,
    OrchestratorSettings,
    WriterSettings,
    EventsSettings,
    JobsSettings,
    MemorySettings,
    WebSearchSettings,
    DocsSettings,
    ChatEngineSettings,
    ConversationSettings,
    EmbedSettings,
    LLMSettings,
    StorageSettings,
    ServiceSettings,
    BaseSettings,
):
    model_config = SettingsConfigDict(
        env_prefix="EKO_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    # Extraction runs on every stack (empty = on): with the bundled model it waits behind
    # people at background priority, and its items are filtered (eko/memory/extraction_filter.py).
    @property
    def memory_extraction_on(self) -> bool:
        return self.memory_extract_enabled is not False

    # "auto" (None): model-hungry features run only when the primary provider is remote.

    @property
    def chain_on(self) -> bool:
        return self.primary_is_remote if self.chain_enabled is None else self.chain_enabled

    def masked(self) -> dict[str, Any]:
        """The resolved config with secrets and database passwords masked, for `eko doctor`."""
        data = self.model_dump(mode="json")
        data["database_url"] = mask_url(self.database_url)
        for provider in data["llm_providers"]:
            if provider.get("api_key"):
                provider["api_key"] = "****"
        if data.get("embed_api_key"):
            data["embed_api_key"] = "****"
        if data.get("web_search_api_key"):
            data["web_search_api_key"] = "****"
        return data
