"""Datetimes from both backends compared safely (SQLite hands back naive UTC values)."""

from __future__ import annotations

from datetime import UTC, datetime


def as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def age_days(moment: datetime, now: datetime) -> float:
    """Days from `moment` to `now`; never negative (a clock skew is not "in the future")."""
    return max(0.0, (as_utc(now) - as_utc(moment)).total_seconds() / 86400.0)
