"""The seed's quota states, from the count that includes the message being answered."""

from __future__ import annotations

import pytest

from eko.chat.engine.quota import quota_state


@pytest.mark.parametrize(
    ("used", "state"),
    [
        (0, "normal"),
        (1, "normal"),
        (6, "normal"),
        (7, "warn_last_free"),
        (8, "blocked"),
        (9, "blocked"),
        (500, "blocked"),
    ],
)
def test_states_with_limit_8(used: int, state: str) -> None:
    assert quota_state(used, 8, is_pro=False) == state


@pytest.mark.parametrize("used", [0, 7, 8, 1000])
def test_pro_is_never_blocked(used: int) -> None:
    assert quota_state(used, 8, is_pro=True) == "normal"


def test_limit_zero_blocks_at_once() -> None:
    assert quota_state(0, 0, is_pro=False) == "blocked"
