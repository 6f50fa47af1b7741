"""The corrective re-ask: what the runtime sends back when structured output did not validate."""

from __future__ import annotations

from dataclasses import replace

from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse

# Sent back to a provider whose structured answer did not validate. It names the error so a
# capable model can fix it; a runtime mechanism, not a prompt of any feature.
CORRECTION_MESSAGE = (
    "Your previous answer was not valid for the required JSON schema ({error}). "
    "Answer again with only a JSON object that matches the schema."
)
# A bad answer echoed into the correction turn is cut: it only has to show what went wrong.
_MAX_ECHOED_ANSWER_CHARS = 2000


def with_correction(request: ProviderRequest, bad_answer: str, error: str) -> ProviderRequest:
    echoed = bad_answer[:_MAX_ECHOED_ANSWER_CHARS]
    return replace(
        request,
        messages=(
            *request.messages,
            ChatMessage(role="assistant", content=echoed),
            ChatMessage(role="user", content=CORRECTION_MESSAGE.format(error=error)),
        ),
    )


def describe_invalid(summary: str, response: ProviderResponse) -> str:
    # A truncated answer is the usual reason a grammar-constrained JSON fails to parse.
    return f"{summary} (truncated at max_tokens)" if response.truncated else summary
