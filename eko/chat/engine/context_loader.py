"""The context loader: the seed's minimum block (always) and additional block (by level).

Minimum block, loaded before the orchestrator (its deterministic part needs it):
user_profile, settings, user_status (quota), history (the message's recent window, counted in
turns, eko/memory/recent.py, then the message itself),
user_facts (required keys known / missing), gates (smalltalk intro, discovery), the active
agents and connected services with the capabilities they grant, and the docs scopes.

Additional block, loaded by node A at the level the guardrails settled on:
light  = facts_store (every stored fact, with its value)
medium = light + extended history + subscriptions (agents, services)
max    = medium with a longer extended history
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.engine.capabilities import AgentCatalog, CapabilityReport, compute_capabilities
from eko.chat.engine.profile import REQUIRED_KEYS, DiscoveryGates
from eko.chat.engine.profile_rows import (
    DocScopeInfo,
    FactItem,
    ProfileRows,
    read_profile_rows,
)
from eko.chat.engine.quota import QuotaStatus
from eko.chat.pipeline import Turn
from eko.config import Settings
from eko.llm.caller_format import render_tool_calls
from eko.memory.recent import META_KEYS, RecentReader, RecentWindow, sender_names
from eko.store import messages as message_repo
from eko.store.db import Database
from eko.store.models import Message, User

log = structlog.get_logger("eko.chat")


@dataclass(frozen=True, slots=True)
class HistoryItem:
    message_id: str
    seq: int
    role: str
    content: str
    sent_at: str
    sender_id: int | None
    # Display name of a user message's sender (for multi-user rooms and the transcript).
    name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_block(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content, "sent_at": self.sent_at}


@dataclass(slots=True)
class ChatContext:
    """The minimum block for one turn (plus what the deterministic orchestrator step needs)."""

    user_id: int
    user_profile: dict[str, Any]
    settings: dict[str, Any]
    user_status: QuotaStatus
    history: list[HistoryItem]
    facts: list[FactItem]
    required_keys: tuple[str, ...]
    discovery: DiscoveryGates
    capabilities: CapabilityReport
    docs_scopes: list[DocScopeInfo]
    # The room's own scope (its attachments), when it has any: always searched (guardrails 8).
    room_scope: DocScopeInfo | None = None
    # The turn before this one: what the assistant last said and in which intent/mode.
    last_assistant: HistoryItem | None = None
    # The recent window `history` was made of: memory recalls only what comes before it.
    recent: RecentWindow | None = None

    @property
    def known(self) -> dict[str, Any]:
        return {fact.fact_key: fact.value for fact in self.facts}

    @property
    def missing_required(self) -> list[str]:
        known = self.known
        return [key for key in self.required_keys if known.get(key) in (None, "")]

    @property
    def smalltalk_intro_eligible(self) -> bool:
        # The seed: free_quota_used < limit AND missing_required_count > 0 (not tied to is_pro).
        status = self.user_status
        return status.free_quota_used < status.free_quota_limit and bool(self.missing_required)

    @property
    def last_user_message(self) -> str:
        for item in reversed(self.history):
            if item.role == "user":
                return item.content
        return ""

    @property
    def last_intent(self) -> str | None:
        value = self.last_assistant.meta.get("intent") if self.last_assistant else None
        return value if isinstance(value, str) else None

    @property
    def last_mode(self) -> str | None:
        value = self.last_assistant.meta.get("mode") if self.last_assistant else None
        return value if isinstance(value, str) else None

    @property
    def last_target_key(self) -> str | None:
        if self.last_assistant is None:
            return None
        value = self.last_assistant.meta.get("smalltalk_target_key")
        return value if isinstance(value, str) else None

    def gates(self) -> dict[str, Any]:
        missing = self.missing_required
        eligible = self.smalltalk_intro_eligible
        return {
            "smalltalk_intro_eligible": eligible,
            "smalltalk_target_key": missing[0] if eligible and missing else None,
            "missing_required": missing,
            "discovery_forced": self.discovery.forced,
            "discovery_status": self.discovery.status,
            "transition_window": self.discovery.transition_window,
            "transition_reason": self.discovery.transition_reason,
        }

    def user_facts_block(self) -> dict[str, Any]:
        missing = self.missing_required
        known = self.known
        return {
            "required_keys": list(self.required_keys),
            "known": {key: known[key] for key in self.required_keys if key in known},
            "missing_required": missing,
            "missing_required_count": len(missing),
        }

    def facts_store(self) -> dict[str, Any]:
        return {
            "count": len(self.facts),
            "items": [fact.to_block() for fact in self.facts],
            "keys": [fact.fact_key for fact in self.facts],
        }

    def minimum_block(self) -> dict[str, Any]:
        """The seed's minimum block, as JSON."""
        return {
            "user_profile": dict(self.user_profile),
            "settings": dict(self.settings),
            "user_status": self.user_status.to_meta(),
            "history": {"messages": [item.to_block() for item in self.history]},
            "user_facts": self.user_facts_block(),
            "gates": self.gates(),
        }

    def with_fact(self, fact: FactItem) -> None:
        """Record a fact learnt during this turn (the intro answer) in the loaded context."""
        self.facts = [f for f in self.facts if f.fact_key != fact.fact_key] + [fact]
        self.facts.sort(key=lambda f: f.fact_key)
        _apply_fact_settings(self.settings, self.known)
        _apply_fact_profile(self.user_profile, self.known)


class ContextLoader:
    # Its key in a turn's read_ahead (ReadsAhead, eko/chat/pipeline.py).
    name = "context"

    def __init__(
        self,
        *,
        database: Database,
        settings: Settings,
        catalog: AgentCatalog,
        recent: RecentReader | None = None,
    ) -> None:
        self._database = database
        self._settings = settings
        self._catalog = catalog
        # Reads the recent window when the turn does not carry it (the same rule as memory's).
        self._recent = recent or RecentReader.from_settings(settings)

    async def read_ahead(self, session: AsyncSession, turn: Turn) -> ProfileRows:
        """The loader's reads, in the session that reads the turn (eko/chat/answering.py)."""
        return await read_profile_rows(session, user_id=turn.user.id, room_id=turn.room.id)

    async def load(self, turn: Turn) -> ChatContext:
        ahead = turn.read_ahead.get(self.name)
        async with self._database.session() as session:
            # Read again unless the turn's is (the quota counted this message since login).
            user = (
                turn.user
                if turn.user_current
                else await session.get(User, turn.user.id, populate_existing=True)
            )
            if user is None:
                raise LookupError(f"user {turn.user.id} no longer exists")
            rows = (
                ahead
                if isinstance(ahead, ProfileRows)
                else await read_profile_rows(session, user_id=user.id, room_id=turn.room.id)
            )
            window = turn.recent
            if window is None:
                window = await self._recent.read(
                    session,
                    room_id=turn.room.id,
                    room_kind=turn.room.kind,
                    before_seq=turn.user_message.seq,
                )
            history = await history_of(session, window, turn.user_message)
        facts, agents, services = rows.facts, rows.agents, rows.services
        docs_scopes, own = rows.docs_scopes, rows.room_scope
        stored_settings = dict(user.settings or {})
        known = {fact.fact_key: fact.value for fact in facts}
        profile = {
            "public_user_id": user.public_id,
            "first_name": None,
            "last_name": None,
            "full_name": user.display_name,
            "display_name": user.display_name,
        }
        _apply_fact_profile(profile, known)
        chat_settings = {
            "locale_main": stored_settings.get("locale_main") or stored_settings.get("locale"),
            "timezone": stored_settings.get("timezone"),
            "use_tu_form": stored_settings.get("use_tu_form"),
            "intro_smalltalk_turns": int(stored_settings.get("intro_smalltalk_turns") or 0),
            "intro_smalltalk_done": bool(stored_settings.get("intro_smalltalk_done", False)),
            "main_city": None,
            "main_activity": None,
        }
        _apply_fact_settings(chat_settings, known)
        previous = [item for item in history if item.seq < turn.user_message.seq]
        last_assistant = next((i for i in reversed(previous) if i.role == "assistant"), None)
        return ChatContext(
            user_id=user.id,
            user_profile=profile,
            settings=chat_settings,
            user_status=QuotaStatus.of(user),
            history=history,
            facts=facts,
            required_keys=REQUIRED_KEYS,
            discovery=DiscoveryGates.of(stored_settings),
            capabilities=compute_capabilities(
                self._catalog, active_agents=agents, connected_services=services
            ),
            docs_scopes=docs_scopes,
            room_scope=own,
            last_assistant=last_assistant,
            recent=window,
        )

    async def extended_history(
        self, ctx: ChatContext, *, room_id: str, level: str
    ) -> list[HistoryItem]:
        """Messages before the minimum history window, for medium / max context."""
        count = {
            "medium": self._settings.chat_medium_history_messages,
            "max": self._settings.chat_max_history_messages,
        }.get(level, 0)
        if count <= 0 or not ctx.history:
            return []
        async with self._database.session() as session:
            return await load_history(
                session, room_id=room_id, up_to_seq=ctx.history[0].seq - 1, limit=count
            )


async def history_of(
    session: AsyncSession, window: RecentWindow, message: Message
) -> list[HistoryItem]:
    """The recent window's messages and the message being answered, chronological."""
    names = dict(window.names)
    if message.sender_id is not None and message.sender_id not in names:
        names.update(await sender_names(session, [message]))
    return [
        *(_history_item(row, names, dict(window.meta.get(row.id, {}))) for row in window.messages),
        _history_item(message, names, _turn_meta(message)),
    ]


def _history_item(row: Message, names: Mapping[int, str], meta: dict[str, Any]) -> HistoryItem:
    return HistoryItem(
        message_id=row.id,
        seq=row.seq,
        role=row.role,
        # A tool-call reply (an API caller's tools) is read by the model as text.
        content="\n".join(p for p in (row.content, render_tool_calls(row.tool_calls or [])) if p),
        sent_at=_iso(row.created_at),
        sender_id=row.sender_id,
        name=names.get(row.sender_id) if row.sender_id is not None else None,
        meta=meta,
    )


async def load_history(
    session: AsyncSession, *, room_id: str, up_to_seq: int, limit: int
) -> list[HistoryItem]:
    if up_to_seq < 1 or limit <= 0:
        return []
    rows = await message_repo.recent_messages(
        session, room_id=room_id, limit=limit, up_to_seq=up_to_seq
    )
    names = await sender_names(session, rows)
    return [_history_item(row, names, _turn_meta(row)) for row in rows]


def _turn_meta(row: Message) -> dict[str, Any]:
    # Only what continuity needs (the recent window reads no more than these).
    meta = row.meta or {}
    return {key: meta[key] for key in META_KEYS if key in meta}


def _apply_fact_profile(profile: dict[str, Any], known: dict[str, Any]) -> None:
    for key in ("first_name", "last_name"):
        if known.get(key):
            profile[key] = str(known[key])
    names = [profile.get("first_name"), profile.get("last_name")]
    if any(names):
        profile["full_name"] = " ".join(str(n) for n in names if n)


def _apply_fact_settings(settings: dict[str, Any], known: dict[str, Any]) -> None:
    for key in ("use_tu_form", "main_city", "main_activity"):
        if key in known:
            settings[key] = known[key]


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""
