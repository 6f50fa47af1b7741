"""The free quota (seed "Règles Quota (v1)") and the paywall short-circuit.

free_quota_used counts a user's messages for life and is never reset; it is incremented in the
same transaction that stores the user message (eko/chat/service.py). So, exactly as in the
seed's flow (the client stores the message, then calls the backend), the count the engine sees
already includes the message being answered:

    used <  limit - 1  -> normal
    used == limit - 1  -> warn_last_free   (message #7 when limit = 8: the last free answer)
    used >= limit      -> blocked          (message #8: the paywall, no model call)

and the front's paywall condition `!is_pro && used >= limit` turns true as message #8 is stored.
A pro user is never blocked (state "normal"). Read-only callers (GET /v1/quota) see the same
function applied to the stored count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from eko.chat.pipeline import Draft, Turn
from eko.chat.reply_meta import ReplyMeta
from eko.prompts.library import PromptLibrary
from eko.store.db import Database
from eko.store.models import User

log = structlog.get_logger("eko.chat")

QuotaState = Literal["normal", "warn_last_free", "blocked"]
PAYWALL_PROMPT = "quota/paywall.md"


def quota_state(used: int, limit: int, *, is_pro: bool) -> QuotaState:
    if is_pro:
        return "normal"
    if used >= limit:
        return "blocked"
    if used == limit - 1:
        return "warn_last_free"
    return "normal"


@dataclass(frozen=True, slots=True)
class QuotaStatus:
    """The seed's quota shape (GET /v1/quota/{public_user_id})."""

    public_user_id: str
    is_pro: bool
    free_quota_used: int
    free_quota_limit: int
    state: QuotaState
    paywall_should_show: bool

    @classmethod
    def of(cls, user: User) -> QuotaStatus:
        used, limit = int(user.free_quota_used), int(user.free_quota_limit)
        return cls(
            public_user_id=user.public_id,
            is_pro=bool(user.is_pro),
            free_quota_used=used,
            free_quota_limit=limit,
            state=quota_state(used, limit, is_pro=bool(user.is_pro)),
            paywall_should_show=not user.is_pro and used >= limit,
        )

    def to_meta(self) -> dict[str, Any]:
        return asdict(self)


async def load_quota(session: AsyncSession, *, user_id: int) -> QuotaStatus | None:
    # Always re-read: the User on a Turn was loaded before its message was counted.
    user = await session.get(User, user_id, populate_existing=True)
    return QuotaStatus.of(user) if user is not None else None


class QuotaPaywall:
    """ShortCircuit "quota_paywall": a blocked user gets the paywall text, with no model call."""

    name = "quota_paywall"

    def __init__(self, *, database: Database, prompts: PromptLibrary) -> None:
        self._database = database
        self._prompts = prompts

    async def respond(self, turn: Turn) -> Draft | None:
        if turn.user_current:
            status: QuotaStatus | None = QuotaStatus.of(turn.user)
        else:
            async with self._database.session() as session:
                status = await load_quota(session, user_id=turn.user.id)
        if status is None or status.state != "blocked":
            return None
        log.info(
            "chat.quota.paywall",
            public_user_id=status.public_user_id,
            free_quota_used=status.free_quota_used,
            free_quota_limit=status.free_quota_limit,
        )
        return Draft(
            content=self._prompts.text(PAYWALL_PROMPT),
            type="paywall",
            meta=ReplyMeta(
                quota=status.to_meta(), intent=None, mode=None, personal_context=False, flags={}
            ),
        )
