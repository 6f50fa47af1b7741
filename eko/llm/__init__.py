"""LLM runtime: providers, ordered fallback, structured output, call log.

Services depend on `LLMRuntime.complete`; providers live in `eko.llm.providers`.
"""

from eko.llm.errors import (
    AllProvidersFailed,
    InvalidOutput,
    LLMError,
    PromptTooLong,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.runtime import LLMRuntime
from eko.llm.types import (
    Attempt,
    CallRecorder,
    ChatMessage,
    Completion,
    LLMCallRecord,
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
)

__all__ = [
    "AllProvidersFailed",
    "Attempt",
    "CallRecorder",
    "ChatMessage",
    "Completion",
    "InvalidOutput",
    "LLMCallRecord",
    "LLMError",
    "LLMRuntime",
    "PromptTooLong",
    "Provider",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderRequest",
    "ProviderResponse",
    "ProviderTimeout",
    "ProviderUnavailable",
    "Usage",
]
