"""Every model module, imported once so `Base.metadata` describes the whole schema.

Migrations (autogenerate, schema tests) read the metadata from here. A feature that adds a
model module adds one import line below.
"""

from __future__ import annotations

from eko.store import (
    account_models,  # API keys, the page's sessions, invitations, failed sign-ins
    chat_models,  # chat engine: facts, agents, services, docs
    conversation_models,  # OpenAI clients' conversations -> rooms
    guard_models,  # memory guard
    jobs_models,  # background jobs (in-process runner)
    lobby_models,  # lobby: reflections, their stats, activity summaries
    memory_models,  # memory: items, summaries, topics
    models,
    outbox_models,  # user messages still owed an answer
    version_models,  # earlier versions of regenerated replies
)
from eko.store.models import Base

metadata = Base.metadata

__all__ = [
    "Base",
    "account_models",
    "chat_models",
    "conversation_models",
    "guard_models",
    "jobs_models",
    "lobby_models",
    "memory_models",
    "metadata",
    "models",
    "outbox_models",
    "version_models",
]
