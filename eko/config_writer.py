"""Settings of the response writer's prompt: a section of eko.config.Settings."""

from __future__ import annotations

from pydantic import BaseModel


class WriterSettings(BaseModel):
    # Name the language of the message being answered in the writer's prompt (French or
    # English, read from its function words; nothing when unclear). A small model otherwise
    # answers in the language of the history (`eko bench language`).
    writer_reply_language: bool = True
