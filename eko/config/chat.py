"""Settings of the conversation and of the chat engine (orchestrator -> plan of whitelisted
nodes -> executor -> response writer), its docs scopes and web search: sections of
eko.config.Settings (which inherits them, so they read from EKO_* like every other setting).
The orchestrator's and the writer's own settings are in orchestrator.py and writer.py."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr


class ConversationSettings(BaseModel):
    # --- conversation ---
    default_persona: str = "eko"
    assistant_name: str = "Eko"
    recent_turns: int = Field(default=10, ge=1)
    recent_max_chars: int = Field(default=5000, ge=100)
    default_free_quota_limit: int = Field(default=8, ge=0)
    # One deadline per message, shared by every model call made for it (orchestrator, writer,
    # their fallbacks). A provider that is not the last one gets at most half of what remains,
    # so a hung primary always leaves time for the fallback.
    chat_message_deadline_s: float = Field(default=120.0, gt=0)
    # Messages being answered at once in this process; past it a new message gets a 503 with
    # Retry-After before anything is stored (duplicates of a message in flight still join it).
    chat_max_inflight: int = Field(default=256, ge=1)
    # The answer outbox (eko/chat/recovery.py): a process answering a stored message holds a
    # lease this long, renewed every third of it; when its process dies, another (or the same
    # after a restart) answers the message once the lease has run out.
    chat_answer_lease_s: float = Field(default=10.0, ge=3)
    # A transient failure (database busy or unreachable) while answering: the message goes
    # back to the outbox and is tried again after this long.
    chat_answer_retry_s: float = Field(default=5.0, gt=0)
    # How often each server process looks for messages owed an answer (start-up included).
    chat_recovery_poll_s: float = Field(default=5.0, gt=0)


class ChatEngineSettings(BaseModel):
    # --- chat engine (orchestrator -> plan of whitelisted nodes -> executor -> response writer) ---
    # Per-node timeout of the plan executor's tool nodes.
    chat_node_timeout_s: float = Field(default=15.0, gt=0)
    # Answer-only lock: the stored answer is cut here, with an ellipsis (anti wall of text).
    chat_max_answer_chars: int = Field(default=4000, ge=100)
    # Additional context: messages of extended history at medium / max context level.
    chat_medium_history_messages: int = Field(default=30, ge=0)
    chat_max_history_messages: int = Field(default=80, ge=0)
    # Agents (subscriptions) -> capabilities -> services each capability needs, as data.
    # JSON in EKO_CHAT_AGENT_CATALOG; None = the packaged catalog (eko/chat/engine/agents.json).
    chat_agent_catalog: dict[str, Any] | None = None


class DocsSettings(BaseModel):
    # Docs scopes: hard caps of tool.docs_chunks (seed: 3 scopes, 8 chunks/scope, 20 in all).
    docs_max_scopes: int = Field(default=3, ge=1)
    docs_max_chunks_per_scope: int = Field(default=8, ge=1)
    docs_max_chunks: int = Field(default=20, ge=1)
    # Ingest: target characters per chunk and the overlap carried into the next chunk.
    docs_chunk_chars: int = Field(default=1000, ge=200)
    docs_chunk_overlap: int = Field(default=150, ge=0)
    # Files attached to a room (POST /v1/rooms/{id}/attachments, `eko rooms attach`): the
    # largest file accepted, and the most text it may hold once extracted (each chunk of it is
    # embedded when the file is attached).
    attachment_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    attachment_max_chars: int = Field(default=300_000, ge=1000)


class WebSearchSettings(BaseModel):
    # Web search: off unless a provider is configured (need_web is then recorded, node skipped).
    web_search_provider: Literal["off", "searxng", "perplexity"] = "off"
    # searxng: the instance URL (JSON format enabled); perplexity: the API base URL (…/v1 or root).
    web_search_url: str | None = None
    web_search_api_key: SecretStr | None = None
    web_search_model: str = "sonar-pro"
    web_search_timeout_s: float = Field(default=20.0, gt=0)
    web_search_max_results: int = Field(default=5, ge=1, le=20)
