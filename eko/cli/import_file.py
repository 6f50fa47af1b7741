"""The file `eko rooms import` reads: a JSON list of turns, or {"messages": [...]} (the body of
POST /v1/rooms/{id}/messages:import). Each turn: role (user|assistant), content, and optional
created_at (ISO 8601), name (the speaker shown) and client_message_id."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from eko.chat.history_import import ROLES, ImportInvalid, ImportTurn, TurnError

KNOWN = frozenset({"role", "content", "created_at", "name", "client_message_id"})


def read_turns(path: Path) -> list[ImportTurn]:
    """The file's turns; raises ImportInvalid (every wrong turn) or ValueError (not JSON)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if isinstance(raw, dict) and isinstance(raw.get("messages"), list):
        raw = raw["messages"]
    if not isinstance(raw, list):
        raise ValueError('expected a JSON list of messages, or {"messages": [...]}')
    turns: list[ImportTurn] = []
    errors: list[TurnError] = []
    for index, item in enumerate(raw):
        found = _shape_errors(index, item)
        if found:
            errors.extend(found)
            continue
        turns.append(
            ImportTurn(
                role=item["role"],
                content=item["content"],
                created_at=_date(item.get("created_at")),
                name=item.get("name"),
                client_id=item.get("client_message_id"),
            )
        )
    if errors:
        raise ImportInvalid(errors)
    return turns


def _shape_errors(index: int, item: Any) -> list[TurnError]:
    if not isinstance(item, dict):
        return [TurnError(index, "message", "not a JSON object")]
    errors = [TurnError(index, key, "unknown field") for key in item if key not in KNOWN]
    for key in ("role", "content"):
        if not isinstance(item.get(key), str):
            errors.append(TurnError(index, key, "missing, or not a string"))
    role = item.get("role")
    if isinstance(role, str) and role not in ROLES:
        errors.append(TurnError(index, "role", f"{role!r} is neither user nor assistant"))
    for key in ("name", "client_message_id", "created_at"):
        if item.get(key) is not None and not isinstance(item[key], str):
            errors.append(TurnError(index, key, "not a string"))
    when = item.get("created_at")
    if isinstance(when, str):
        try:
            _date(when)
        except ValueError:
            errors.append(TurnError(index, "created_at", f"{when!r} is not an ISO 8601 date"))
    return errors


def _date(value: Any) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
