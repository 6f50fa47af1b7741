"""The one rule sharing a reader's room between the recent window and memory."""

from __future__ import annotations

from datetime import UTC, datetime

from eko.memory.budget import BudgetRule, share_reader_room
from eko.memory.recent import RecentReader
from eko.memory.turns import group_turns
from eko.store.models import Message


def test_the_recent_window_never_takes_memorys_floor() -> None:
    share = share_reader_room(BudgetRule(total=8000, recent_share=0.4), 1000)
    assert share.recent == 400
    assert share.past(recent_used=100) == 900  # what the window leaves goes to memory
    # A newest turn larger than its share (always kept) does not eat memory's floor.
    assert share.past(recent_used=950) == 600
    assert share_reader_room(None, -5).past(0) == 0


def message(seq: int, role: str, content: str) -> Message:
    return Message(
        id=f"m{seq}",
        room_id="r",
        seq=seq,
        sender_id=1 if role == "user" else None,
        role=role,
        type="message",
        content=content,
        meta={},
        created_at=datetime(2024, 1, 1, tzinfo=UTC),
        char_count=len(content),
        char_end=seq * 100,
    )


def test_the_window_narrows_to_its_newest_turns() -> None:
    reader = RecentReader(turns=10, lobby_turns=10, max_chars=10_000)
    messages = [
        message(seq, "user" if seq % 2 else "assistant", f"message {seq} " + "x" * 90)
        for seq in range(1, 11)
    ]
    window = reader.fit(group_turns(messages), {1: "Ann"})
    assert len(window.turns) == 5

    def size(m: Message) -> int:
        return len(m.content)

    narrowed = reader.newest(window, 450, size)
    assert [t.first_seq for t in narrowed.turns] == [7, 9]  # two turns of ~200 characters
    assert narrowed.first_seq == 7 and narrowed.part.first_seq == 7
    # The newest turn is kept whatever its size; a window that fits is returned as is.
    assert [t.first_seq for t in reader.newest(window, 10, size).turns] == [9]
    assert reader.newest(window, 10_000, size) is window
