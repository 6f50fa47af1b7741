"""Build the ordered provider list from settings (EKO_LLM_PROVIDERS)."""

from __future__ import annotations

import httpx

from eko.config import ProviderConfig, Settings
from eko.llm.providers.llama_backend import LlamaLoader, load_llama
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.providers.openai_compat import OpenAICompatProvider
from eko.llm.types import Provider


def build_providers(
    settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> list[Provider]:
    """One provider per configured entry, in fallback order; nothing is loaded or connected yet.

    Labels are made unique (a second unnamed "openai" becomes "openai#2") because the call log
    and the fallback chain are read by provider name.
    """
    providers: list[Provider] = []
    seen: dict[str, int] = {}
    for config in settings.llm_providers:
        label = config.label
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        providers.append(_build_one(config, label, settings, transport))
    return providers


def build_local_provider(
    settings: Settings,
    *,
    name: str = "local",
    timeout_s: float | None = None,
    loader: LlamaLoader = load_llama,
) -> LocalLlamaProvider:
    """The local model the settings describe (EKO_LOCAL_*). `loader`: how its GGUF is opened
    (`load_llama_vocab`: its tokenizer and template only, for counting prompt tokens)."""
    return LocalLlamaProvider(
        settings.local_model_path,
        bundled=settings.local_model,
        prompt_style=settings.local_prompt_style,
        models_dir=settings.models_dir,
        name=name,
        n_ctx=settings.local_n_ctx,
        n_threads=settings.local_threads,
        timeout_s=timeout_s,
        max_prompt_tokens=settings.local_max_prompt_tokens,
        prompt_cache_bytes=settings.local_prompt_cache_mb * 1024 * 1024,
        prefill_chunk=settings.local_prefill_chunk,
        queue_wait_s=settings.local_queue_wait_s,
        loader=loader,
    )


def _build_one(
    config: ProviderConfig,
    label: str,
    settings: Settings,
    transport: httpx.AsyncBaseTransport | None,
) -> Provider:
    if config.kind == "local":
        # The 60 s default is an HTTP budget; a busy 2-core machine can take longer for a JSON
        # answer, and callers bound their own waits (cancelling stops the generation). So a
        # local model gets a timeout only when one is configured for it.
        explicit_timeout = "timeout_s" in config.model_fields_set
        return build_local_provider(
            settings, name=label, timeout_s=config.timeout_s if explicit_timeout else None
        )
    # Settings validation guarantees base_url and model for kind "openai".
    assert config.base_url is not None and config.model is not None
    return OpenAICompatProvider(
        base_url=config.base_url,
        model=config.model,
        name=label,
        api_key=config.api_key.get_secret_value() if config.api_key is not None else None,
        timeout_s=config.timeout_s,
        connect_timeout_s=config.connect_timeout_s,
        headers=config.headers,
        structured_output=config.structured_output,
        transport=transport,
    )
