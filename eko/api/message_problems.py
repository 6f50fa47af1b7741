"""The chat service's refusals of a message's content, as problem+json (native API routes)."""

from __future__ import annotations

from eko.api.problems import Problem
from eko.chat.service import EmptyMessage, MessageTooLong


def content_problem(exc: MessageTooLong | EmptyMessage) -> Problem:
    if isinstance(exc, MessageTooLong):
        return Problem(
            413,
            "message-too-long",
            "Message too long",
            str(exc),
            limit=exc.limit,
            length=exc.length,
        )
    return Problem(422, "empty-message", "Empty message", str(exc))
