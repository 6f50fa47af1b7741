"""Value types shared by every provider and the runtime."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

from pydantic import BaseModel

if TYPE_CHECKING:
    from eko.llm.caller_format import CallerFormat
    from eko.llm.prompt_budget import InputCut

Role = Literal["system", "user", "assistant"]
Outcome = Literal["ok", "fallback", "invalid", "error"]
# Why a provider did not answer, in the words a person is told (eko/llm/failures.py): busy (a
# local model ran out of time waiting for its turn or writing), timeout (a remote one did not
# answer in time), unreachable (cannot be reached, or its circuit is open), error (any other).
FailureCause = Literal["busy", "timeout", "unreachable", "error"]
# Who waits for a call: a person ("interactive") or nobody ("background": summaries, extraction,
# topics, reflection). A local model serves interactive calls first.
Priority = Literal["interactive", "background"]

OutputT = TypeVar("OutputT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str
    # Display name of the speaker (used by completion-style prompts for base models).
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What a provider is asked to do: one generation, plain or constrained to a JSON schema."""

    messages: tuple[ChatMessage, ...]
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 256
    temperature: float = 0.7
    stop: tuple[str, ...] = ()
    # Name of the assistant persona, used by completion-style prompts ("Eko:").
    assistant_name: str = "Eko"
    priority: Priority = "interactive"
    # Native tool definitions (OpenAI `tools` field), sent by providers that support them
    # (eko/chain/native_tools.py). Empty: none.
    tools: tuple[dict[str, Any], ...] = ()
    # What an API caller asked the reply to be (eko/llm/caller_format.py): passed through by
    # a remote provider; a local one is held to `json_schema` (its answer_schema) by grammar.
    caller_format: CallerFormat | None = None
    # Lines of the system prompt the answer may repeat word for word (memory, profile,
    # documents): a local model's answer that quotes one is not reciting its instructions.
    quotable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProviderResponse:
    text: str
    usage: Usage
    model: str
    # True when generation stopped on max_tokens (a truncated answer).
    truncated: bool = False
    # What the provider cut to fit its prompt budget (eko.llm.prompt_budget), if anything.
    input_cut: InputCut | None = None
    # Native tool calls the model made (OpenAI `message.tool_calls`), as sent.
    tool_calls: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try at one provider, as logged in llm_calls."""

    provider: str
    model: str
    outcome: Outcome
    duration_ms: float
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    # A failed attempt: why, in a person's words (None for an answer).
    cause: FailureCause | None = None


@dataclass(frozen=True, slots=True)
class Completion(Generic[OutputT]):
    """The runtime's answer: text, validated data (when an output model was given), provenance."""

    text: str
    data: OutputT | None
    provider: str
    model: str
    usage: Usage
    duration_ms: float
    attempts: tuple[Attempt, ...]
    truncated: bool = False
    input_cut: InputCut | None = None
    # The tool calls of a reply to a caller's `tools` (eko/llm/caller_format.py).
    tool_calls: tuple[dict[str, Any], ...] = ()

    @property
    def fallback_used(self) -> bool:
        return len(self.attempts) > 1 or self.attempts[-1].outcome == "fallback"


@dataclass(frozen=True, slots=True)
class LLMCallRecord:
    """One row of the llm_calls table."""

    purpose: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    duration_ms: float
    outcome: Outcome
    room_id: str | None = None
    message_id: str | None = None
    error: str | None = None
    prompt: str | None = None  # only when debug prompt dumps are on


class Provider(Protocol):
    """One model behind one API. Raises ProviderError subclasses, never vendor exceptions."""

    name: str
    model: str

    async def generate(self, request: ProviderRequest) -> ProviderResponse: ...

    async def aclose(self) -> None: ...


# What a provider's stream yields: text deltas (non-empty str), then exactly one ProviderResponse
# with the complete text, usage and model. The final text is authoritative: a local model's
# sanitizer may cut what was already shown (the deltas are the display, the response is stored).
StreamItem: TypeAlias = str | ProviderResponse


@runtime_checkable
class StreamingProvider(Provider, Protocol):
    """A provider that can hand its answer out as it is generated.

    Failing before the first delta is an ordinary ProviderError (the runtime falls back);
    closing the iterator early (the caller stopped) must stop the generation.
    """

    def stream(self, request: ProviderRequest) -> AsyncGenerator[StreamItem, None]: ...


class CallRecorder(Protocol):
    """Where the runtime writes one record per model call (the store implements it)."""

    async def record(self, call: LLMCallRecord) -> None: ...
