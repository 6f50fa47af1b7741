"""Settings of the chat models: the ordered provider list, the bundled local model and the
runtime's budgets. A section of eko.config.Settings (which inherits it, so it reads from
EKO_* like every other setting).

Nested values (the provider list) are JSON in one variable, so a real provider is one line:

    EKO_LLM_PROVIDERS='[{"kind":"openai","base_url":"https://api.openai.com/v1",
                          "model":"gpt-4o-mini","api_key":"sk-..."},{"kind":"local"}]'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

# The names EKO_LOCAL_MODEL accepts: the models of eko/llm/bundled/catalog.py, listed here so
# the configuration validates them without loading the LLM package (a test keeps both equal).
BUNDLED_MODEL_NAMES = (
    "qwen2.5-coder-1.5b-instruct-q4_k_m",
    "qwen2.5-coder-0.5b-instruct-q4_k_m",
    "gemma-3-270m-q4_k_m",
)
# The bundled model chosen by `eko bench llm` (eko.llm.bundled.DEFAULT_BUNDLED_MODEL).
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"


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


class LLMSettings(BaseModel):
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
    # The local model serves one call at a time, people in the order they arrived. A call
    # waiting in that line does not spend its message's deadline (nor the writer's limit)
    # for this long at most: its time counts from when its turn comes.
    local_queue_wait_s: float = Field(default=600.0, gt=0)
    # People waiting for the local model at most: past it, a new message is refused at once
    # with 503 + Retry-After (nothing stored) instead of being accepted and answered with an
    # apology much later. 0: no limit.
    local_max_queue: int = Field(default=6, ge=0)
    # At start-up, load the local model and read the instructions every reply starts with
    # (background priority), so the first person does not wait for them.
    local_warm_up: bool = True
    # Generation budget of one reply.
    llm_max_tokens: int = Field(default=200, ge=1, le=8192)
    # Sampling temperature of replies. Unset: 0 (greedy) when the first provider is the
    # local model, 0.7 otherwise — the bundled 1.5B model sampled at 0.7 lost answers it gets
    # right at 0 (`eko bench reply`, docs/benchmarks.md); a large model varies its wording.
    llm_temperature: float | None = Field(default=None, ge=0, le=2)
    # Circuit breaker per provider: a timeout opens it at once (not the local model's: slow
    # there means busy, not down), and so does an unreachable host while a fallback can
    # answer; other failures (HTTP 5xx, crashes, garbage answers, the only provider left
    # unreachable) after this many in a row. While open, the provider is skipped; after the
    # cooldown one probe call is let through (half-open).
    llm_breaker_failures: int = Field(default=3, ge=1, le=100)
    llm_breaker_cooldown_s: float = Field(default=30.0, gt=0)

    @field_validator("local_model")
    @classmethod
    def _known_bundled_model(cls, value: str) -> str:
        if value not in BUNDLED_MODEL_NAMES:
            raise ValueError(
                f"unknown bundled model {value!r}; choose one of {', '.join(BUNDLED_MODEL_NAMES)}"
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

    @property
    def primary_is_remote(self) -> bool:
        """Whether the first provider is a remote model ("auto" turns model-hungry features on
        only then)."""
        return self.llm_providers[0].kind != "local"
