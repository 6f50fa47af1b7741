"""Clean a small model's plain-text reply: no template tokens, role labels, next turns or echoes.

Stop sequences end most runaway generations, but a small model still leaks in other ways: it
starts with its own role label ("Eko: …", "assistant\n…"), writes a template token as text,
invents the user's next line ("User: thanks!", "Utilisateur : …") or recites a line of its
system prompt. Each is cut here, after generation, for every plain-text answer of a local
model. Structured (JSON) answers are never touched: the grammar shapes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from eko.llm.types import ChatMessage

# Generic role names a model invents turns for, in English and French.
GENERIC_SPEAKERS = (
    "user",
    "utilisateur",
    "utilisatrice",
    "human",
    "humain",
    "assistant",
    "assistante",
    "system",
    "système",
    "systeme",
)
# Chat-template control tokens written as text: ChatML (<|im_start|>), Llama 3 (<|eot_id|>),
# Gemma (<start_of_turn>), Mistral ([INST]), and end-of-sequence markers. Whatever follows one
# belongs to another turn.
_TEMPLATE_TOKEN = re.compile(
    r"<\|[A-Za-z_]+(?:\|>|>)|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>|</?s>|<eos>|<bos>"
)
# A line that is only a bare role name (what remains of "<|im_start|>user\n").
_BARE_ROLE_LINE = re.compile(r"^\s*(?:user|assistant|system|model)\s*$", re.IGNORECASE)
# Lines recited from the prompt are dropped only when this long: short lines ("Merci !")
# legitimately appear in both.
ECHO_MIN_CHARS = 40


def sanitize_reply(
    text: str,
    *,
    assistant_name: str,
    speakers: Iterable[str] = (),
    prompt_texts: Sequence[str] = (),
) -> str:
    """The reply without leaked template tokens, role labels, invented turns or prompt lines.

    `speakers` are the names seen in the conversation (users of a group room); `prompt_texts`
    the system texts the reply must not recite.
    """
    text = _cut_at_template_token(text)
    assistant_labels = _label_pattern([assistant_name, "assistant", "assistante"])
    text = _strip_leading_labels(text, assistant_labels)
    text = _drop_self_address(text, assistant_name)
    turn_labels = _label_pattern([*GENERIC_SPEAKERS, assistant_name, *speakers])
    text = _cut_at_next_turn(text, turn_labels)
    text = _drop_echoed_lines(text, prompt_texts)
    return text.strip()


def instruction_texts(messages: Iterable[ChatMessage], quotable: Iterable[str] = ()) -> list[str]:
    """The system texts a reply must not recite: each system message without the lines the
    answer may quote (a remembered fact, the profile, a document's passage)."""
    lines = [line for line in quotable if line.strip()]
    texts = []
    for message in messages:
        if message.role != "system":
            continue
        content = message.content
        for line in lines:
            content = content.replace(line, "\n")
        texts.append(content)
    return texts


def _label_pattern(names: Iterable[str]) -> re.Pattern[str]:
    unique = sorted({name.strip() for name in names if name and name.strip()}, key=len)
    alternatives = "|".join(re.escape(name) for name in reversed(unique))
    # "Eko:", "Eko :", "**User:**", "[User]:", "- User:" — a label at the start of a line.
    return re.compile(
        rf"^[ \t>*_\-\[]*(?:{alternatives})[ \t*_\]]*[:：][*_]*",
        re.IGNORECASE | re.MULTILINE,
    )


def _cut_at_template_token(text: str) -> str:
    match = _TEMPLATE_TOKEN.search(text)
    if match is None:
        return text
    head = text[: match.start()]
    if head.strip():
        return head
    # The reply opens with a token ("<|im_start|>assistant\nHello"): drop it and its role line.
    rest = text[match.end() :]
    first_line, _, remainder = rest.partition("\n")
    if _BARE_ROLE_LINE.match(first_line):
        if first_line.strip().lower() in ("user", "system"):
            return ""  # the model opened someone else's turn: nothing of it is an answer
        rest = remainder
    return _cut_at_template_token(rest)


def _strip_leading_labels(text: str, labels: re.Pattern[str]) -> str:
    while True:
        stripped = text.lstrip()
        first_line, newline, remainder = stripped.partition("\n")
        if _BARE_ROLE_LINE.match(first_line) and newline:
            text = remainder
            continue
        match = labels.match(stripped)
        if match is None:
            return stripped
        text = stripped[match.end() :]


def _drop_self_address(text: str, assistant_name: str) -> str:
    """ "Eko, je ne connais pas…" written by Eko: the model addressed itself (it read its name
    as the person it answers). The name and its comma go; the sentence stays."""
    name = assistant_name.strip()
    match = re.match(rf"{re.escape(name)}\s*,\s*(?=\w)", text) if name else None
    if match is None:
        return text
    rest = text[match.end() :]
    return rest[:1].upper() + rest[1:]


def _cut_at_next_turn(text: str, labels: re.Pattern[str]) -> str:
    match = labels.search(text)
    if match is None:
        return text
    # A label before any text (after the assistant's own, stripped above): the whole reply is
    # someone else's turn, and nothing of it is the assistant's answer.
    return text[: match.start()]


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def _drop_echoed_lines(text: str, prompt_texts: Sequence[str]) -> str:
    sources = [_normalise(source) for source in prompt_texts if source]
    if not sources:
        return text
    kept = []
    for line in text.splitlines():
        normalised = _normalise(line)
        if len(normalised) >= ECHO_MIN_CHARS and any(normalised in src for src in sources):
            continue
        kept.append(line)
    return "\n".join(kept)
