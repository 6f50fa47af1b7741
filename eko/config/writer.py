"""Settings of the response writer (its time limit and prompt): a section of
eko.config.Settings."""

from __future__ import annotations

from pydantic import BaseModel, Field


class WriterSettings(BaseModel):
    # The plan executor's timeout of the response writer's node (a model call).
    chat_writer_timeout_s: float = Field(default=120.0, gt=0)
    # Characters of documentation and of web digest the response writer may put in its prompt.
    chat_writer_docs_max_chars: int = Field(default=4000, ge=200)
    chat_writer_web_max_chars: int = Field(default=1500, ge=200)
    # Tell the writer the language of the message being answered (French or English, read from
    # its function words; nothing when unclear): a `reply_language` line in the turn's inputs
    # and a short note after the message in the model's copy of it. A small model otherwise
    # answers in the language of the history (`eko bench language`).
    writer_reply_language: bool = True
    # Grounded answers about the user (docs/grounding.md): a question about the user's life
    # that nothing known mentions gets a note in the writer's prompt (memory has nothing:
    # say so, ask), and a reply that still claims to know is replaced by "I don't know —
    # tell me?". False: today's writer, neither note nor check (`eko bench grounded`).
    writer_grounding: bool = True
