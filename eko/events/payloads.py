"""Event payloads built from stored objects (what clients receive in `data`)."""

from __future__ import annotations

from eko.events.types import Event
from eko.store.models import Message


def message_created(message: Message) -> Event:
    return Event(
        type="message.created",
        room_id=message.room_id,
        data={
            "message_id": message.id,
            "role": message.role,
            "message": {
                "id": message.id,
                "room_id": message.room_id,
                "seq": message.seq,
                "role": message.role,
                "type": message.type,
                "content": message.content,
                "reply_to_id": message.reply_to_id,
                "created_at": message.created_at.isoformat() if message.created_at else None,
            },
        },
    )


def message_updated(message: Message) -> Event:
    """A stored message changed in place (a regenerated reply): same shape as message.created."""
    created = message_created(message)
    return Event(type="message.updated", room_id=created.room_id, data=created.data)
