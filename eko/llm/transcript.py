"""Render chat messages as a plain completion transcript, for base models without a chat template.

A base model (the bundled Gemma 3 270M) echoes chat-template markup instead of answering it.
What it does continue well is a script: the system text, then one line per turn as
"Speaker: text", ending with "Eko:". Generation must then stop where the model starts
writing the next speaker's line, so the stop markers are every speaker seen plus the
generic user label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from eko.llm.types import ChatMessage

DEFAULT_USER_LABEL = "User"

# A speaker label is one line without the ":" that ends it; anything else would break the
# "Speaker: text" shape the model imitates (and let a user name forge a turn).
_LABEL_FORBIDDEN = re.compile(r"[\s:]+")
_CONTINUATION = re.compile(r"\n[ \t]*")
CONTINUATION_INDENT = "\n  "


@dataclass(frozen=True, slots=True)
class Transcript:
    prompt: str
    stop: tuple[str, ...]


def speaker_label(name: str | None, fallback: str) -> str:
    """A display name made safe for a "Name:" line; the fallback when nothing usable is left."""
    if name is None:
        return fallback
    cleaned = _LABEL_FORBIDDEN.sub(" ", name).strip()
    return cleaned or fallback


def render_transcript(
    messages: Sequence[ChatMessage],
    *,
    assistant_name: str,
    user_label: str = DEFAULT_USER_LABEL,
) -> Transcript:
    """System text first, then one "Speaker: text" line per turn, ending with "<assistant>:".

    System messages anywhere in the list are rendered as plain paragraphs where they stand:
    a base model reads them as narration, which is what they are to it.
    """
    assistant = speaker_label(assistant_name, "Assistant")
    user_default = speaker_label(user_label, DEFAULT_USER_LABEL)
    speakers: list[str] = [user_default, assistant]
    blocks: list[str] = []
    turns: list[str] = []

    def flush_turns() -> None:
        if turns:
            blocks.append("\n".join(turns))
            turns.clear()

    for message in messages:
        text = message.content.strip()
        if message.role == "system":
            flush_turns()
            if text:
                blocks.append(text)
            continue
        default = assistant if message.role == "assistant" else user_default
        label = speaker_label(message.name, default)
        if label not in speakers:
            speakers.append(label)
        # Continuation lines are indented, so a message containing "\nEko: ..." cannot forge
        # a turn (the model and the stop markers only read "Speaker:" at a line start).
        turns.append(f"{label}: {_CONTINUATION.sub(CONTINUATION_INDENT, text)}")
    # No trailing space after the colon: the model's own first token carries it, and a
    # forced space makes small models start with an odd token.
    turns.append(f"{assistant}:")
    flush_turns()
    prompt = "\n\n".join(blocks)
    return Transcript(prompt=prompt, stop=tuple(f"\n{label}:" for label in speakers))
