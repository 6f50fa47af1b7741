"""The manual reflection trigger's limit: one reflection by hand per user per interval
(EKO_REFLECTION_MANUAL_INTERVAL_S; 0 = no limit); staff are not limited.

Counted from the stored reflections (`meta.triggered_by`, eko.lobby.store), so every API process
sees the same history. Only triggers that went as far as the model count: one skipped because
the lobby's last message is the assistant's, or with no open curiosity, cost nothing. Manual
interventions are not counted in the day's budget of scheduled ones (eko.lobby.store.claim_slot).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta

from eko.lobby import store
from eko.store.db import Database
from eko.store.models import User, utcnow


class ManualTriggerLimit:
    def __init__(
        self,
        database: Database,
        *,
        interval_s: float,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._database = database
        self.interval_s = interval_s
        self._clock = clock

    async def retry_after_s(self, user: User) -> int | None:
        """Seconds before `user` may trigger a reflection by hand again; None: now."""
        if user.role == "staff" or self.interval_s <= 0:
            return None
        now = self._clock()
        async with self._database.session() as session:
            last = await store.last_manual_reflection(
                session, by=user.public_id, since=now - timedelta(seconds=self.interval_s)
            )
        if last is None:
            return None
        left = self.interval_s - (now - last).total_seconds()
        return max(1, math.ceil(left))
