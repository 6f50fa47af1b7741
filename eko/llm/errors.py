"""One error hierarchy for every provider: vendor and transport errors are mapped into it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eko.llm.types import Attempt


class LLMError(Exception):
    """Base of every error the LLM layer raises."""


class ProviderError(LLMError):
    """A single provider failed; the runtime falls back to the next one."""

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider


class ProviderUnavailable(ProviderError):
    """Connection refused, DNS failure, model file missing: the provider cannot be reached."""


class ProviderTimeout(ProviderError):
    """The provider did not answer within its timeout."""


class ProviderHTTPError(ProviderError):
    """The provider answered with an HTTP error status."""

    def __init__(self, provider: str, status_code: int, message: str) -> None:
        super().__init__(provider, f"HTTP {status_code}: {message}")
        self.status_code = status_code


class PromptTooLong(ProviderError):
    """The prompt does not fit the model's context window; a larger model may take it."""


class InvalidOutput(ProviderError):
    """The provider answered, but the output is unusable (not JSON, fails validation, empty)."""


class AllProvidersFailed(LLMError):
    """Every provider in the fallback list failed. Callers turn this into a safe answer."""

    def __init__(
        self,
        attempts: tuple[Attempt, ...],
        *,
        skipped: tuple[str, ...] = (),
        timed_out: bool = False,
    ) -> None:
        summary = "; ".join(f"{a.provider}={a.outcome}({a.error})" for a in attempts) or "none"
        if skipped:
            summary += f"; skipped (circuit open or deadline spent): {', '.join(skipped)}"
        super().__init__(f"all LLM providers failed: {summary}")
        self.attempts = attempts
        # Providers not called: their circuit breaker was open, or the deadline was spent.
        self.skipped = skipped
        # The message's deadline (or the caller's share of it) ran out before an answer.
        self.timed_out = timed_out
