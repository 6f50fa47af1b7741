"""Bodies of the search route (GET /v1/search)."""

from __future__ import annotations

from pydantic import BaseModel

from eko.api.schemas.rooms import RoomOut


class MessageFound(BaseModel):
    room_id: str
    room_kind: str
    room_title: str
    message_id: str
    seq: int
    role: str
    # The message around its first matching word, on one line.
    snippet: str


class SearchOut(BaseModel):
    query: str
    # The caller's rooms whose title holds every word of the query.
    rooms: list[RoomOut]
    # Their messages holding every significant word (each as a prefix), best first.
    messages: list[MessageFound]
