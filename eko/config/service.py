"""Settings of the HTTP service and its limits: a section of eko.config.Settings (which
inherits it, so it reads from EKO_* like every other setting)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ServiceSettings(BaseModel):
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

    # --- API limits ---
    max_message_chars: int = Field(default=8000, ge=1)
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    # POST /v1/rooms/{id}/messages:import and `eko rooms import` (eko/chat/history_import.py):
    # at most this many turns per call, in a body of at most this many bytes.
    import_max_messages: int = Field(default=5000, ge=1, le=100_000)
    import_max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    page_size_max: int = Field(default=200, ge=1)

    # --- scale-out ---
    # API worker processes of `eko serve` (PostgreSQL only; the in-process local model cannot
    # be shared: run it with `eko model serve` and register it as an openai provider).
    workers: int = Field(default=1, ge=1, le=64)
