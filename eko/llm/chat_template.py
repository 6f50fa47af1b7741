"""The model's own chat template (GGUF `tokenizer.chat_template`), rendered as llama.cpp does.

Instruction-tuned models answer well only in the format they were tuned on. This renders the
messages with llama-cpp-python's Jinja2 chat formatter — what `create_chat_completion` uses —
but leaves generation to the provider, which needs what that call does not offer: a
cancellation criterion, a grammar checked before use, and banned turn-start tokens.

From the template it also derives the turn markers (e.g. "<|im_end|>", "<|im_start|>user",
"<|im_start|>"): stop sequences, and the control tokens a reply must never emit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from eko.llm.types import ChatMessage

TEMPLATE_KEY = "tokenizer.chat_template"
# Stand-ins rendered through the template to find what it writes between turns.
_PROBE = ("EKO_PROBE_SYSTEM", "EKO_PROBE_USER_1", "EKO_PROBE_ASSISTANT", "EKO_PROBE_USER_2")


class TemplateError(ValueError):
    """The template cannot render these messages (a role order it refuses)."""


@dataclass(frozen=True, slots=True)
class RenderedChat:
    prompt: str
    # Whether the tokenizer must add BOS (false when the template wrote its own).
    add_bos: bool


Formatter = Callable[[list[dict[str, str]]], tuple[str, bool]]


class Tokenizer(Protocol):
    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]: ...

    def detokenize(
        self, tokens: list[int], prev_tokens: list[int] | None = None, special: bool = False
    ) -> bytes: ...


def jinja_formatter(template: str, *, eos_token: str, bos_token: str) -> Formatter:
    """llama-cpp-python's formatter for this template (generation prompt included)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    formatter = Jinja2ChatFormatter(template=template, eos_token=eos_token, bos_token=bos_token)

    def render(messages: list[dict[str, str]]) -> tuple[str, bool]:
        result = formatter(messages=messages)  # type: ignore[arg-type]
        return result.prompt, bool(result.added_special)

    return render


class ChatTemplate:
    def __init__(self, formatter: Formatter, *, eos_token: str) -> None:
        self._formatter = formatter
        self.stop = turn_markers(formatter, eos_token)

    @classmethod
    def from_metadata(
        cls, metadata: Mapping[str, str], *, eos_token: str, bos_token: str
    ) -> ChatTemplate | None:
        """The GGUF's template, or None when the model has none (a base model)."""
        template = metadata.get(TEMPLATE_KEY)
        if not template:
            return None
        return cls(
            jinja_formatter(template, eos_token=eos_token, bos_token=bos_token), eos_token=eos_token
        )

    def render(self, messages: Sequence[ChatMessage]) -> RenderedChat:
        """The prompt, ending with the assistant's header (the model writes its turn next).

        Templates that refuse the messages as given (a system message mid-conversation, two
        user turns in a row) get them folded: systems merged first, same-role turns joined.
        """
        plain = _as_dicts(messages)
        try:
            return self._render(plain)
        except TemplateError:
            pass
        folded = _folded(plain)
        try:
            return self._render(folded)
        except TemplateError:
            # Some templates have no system role at all: its text opens the first user turn.
            return self._render(_system_in_first_user(folded))

    def _render(self, messages: list[dict[str, str]]) -> RenderedChat:
        try:
            prompt, added_special = self._formatter(messages)
        except Exception as exc:  # jinja2 errors and the template's raise_exception()
            raise TemplateError(f"chat template refused the messages: {exc}") from exc
        return RenderedChat(prompt=prompt, add_bos=not added_special)


def turn_markers(formatter: Formatter, eos_token: str) -> tuple[str, ...]:
    """What the template writes between turns, split on whitespace, plus the header prefix.

    ChatML gives "<|im_end|>", "<|im_start|>user", "<|im_start|>assistant" and their common
    prefix "<|im_start|>"; Gemma "<end_of_turn>", "<start_of_turn>user", "<start_of_turn>".
    """
    system, user_1, assistant, user_2 = _PROBE
    probe = [
        {"role": "system", "content": system},
        {"role": "user", "content": user_1},
        {"role": "assistant", "content": assistant},
        {"role": "user", "content": user_2},
    ]
    markers: list[str] = [eos_token] if eos_token else []
    try:
        text, _ = formatter(probe)
        user_gap = text[text.index(assistant) + len(assistant) : text.index(user_2)]
        assistant_gap = text[text.index(user_2) + len(user_2) :]
    except Exception:  # a template that cannot render the probe: the EOS token only
        return tuple(markers)
    markers += user_gap.split() + assistant_gap.split()
    if user_gap.split() and assistant_gap.split():
        prefix = _common_prefix(user_gap.split()[-1], assistant_gap.split()[-1])
        if len(prefix) >= 3:
            markers.append(prefix)
    return tuple(dict.fromkeys(marker for marker in markers if marker))


def control_token_ids(
    tokenizer: Tokenizer, markers: Iterable[str], *, ends_generation: Callable[[int], bool]
) -> frozenset[int]:
    """Control tokens of the markers that do not end generation (e.g. "<|im_start|>").

    A reply that emits one starts a new turn; banning them lets the model only end its own.
    A control token is one that prints as nothing in plain text.
    """
    ids: set[int] = set()
    for marker in markers:
        for token in tokenizer.tokenize(marker.encode("utf-8"), add_bos=False, special=True):
            is_control = tokenizer.detokenize([token]) == b"" and tokenizer.detokenize(
                [token], special=True
            )
            if is_control and not ends_generation(token):
                ids.add(token)
    return frozenset(ids)


def _as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    # Names are kept only when several people speak (a group room): "Alice: …". In a direct
    # conversation a name prefix only invites the model to write labels itself.
    names = {m.name for m in messages if m.role == "user" and m.name}
    named = len(names) > 1
    return [
        {
            "role": m.role,
            "content": f"{m.name}: {m.content}"
            if named and m.role == "user" and m.name
            else m.content,
        }
        for m in messages
    ]


def _folded(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    systems = [m["content"] for m in messages if m["role"] == "system"]
    folded: list[dict[str, str]] = (
        [{"role": "system", "content": "\n\n".join(systems)}] if systems else []
    )
    for message in messages:
        if message["role"] == "system":
            continue
        if folded and folded[-1]["role"] == message["role"]:
            folded[-1] = {
                "role": message["role"],
                "content": f"{folded[-1]['content']}\n\n{message['content']}",
            }
        else:
            folded.append(dict(message))
    return folded


def _system_in_first_user(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    if not messages or messages[0]["role"] != "system":
        return messages
    system, rest = messages[0]["content"], messages[1:]
    if rest and rest[0]["role"] == "user":
        return [{"role": "user", "content": f"{system}\n\n{rest[0]['content']}"}, *rest[1:]]
    return [{"role": "user", "content": system}, *rest]


def _common_prefix(first: str, second: str) -> str:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return first[:length]
