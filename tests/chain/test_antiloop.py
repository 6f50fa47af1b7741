"""Anti-loop v2: the same call twice stops the stage; stage budgets and the global cap hold."""

from __future__ import annotations

from eko.chain.antiloop import GlobalBudget, StageGuard, call_hash


def test_the_hash_is_canonical() -> None:
    assert call_hash("list_dir", {"a": 1, "b": "x"}) == call_hash("list_dir", {"b": "x", "a": 1})
    assert call_hash("list_dir", {"path": "."}) != call_hash("list_dir", {"path": "src"})
    assert call_hash("list_dir", {}) != call_hash("read_file", {})


def test_a_repeated_call_stops_the_stage_at_once() -> None:
    guard = StageGuard(budget=4, chain=GlobalBudget())
    assert guard.allow_call("list_dir", {"path": "."})
    assert guard.allow_call("list_dir", {"path": "src"})
    assert not guard.allow_call("list_dir", {"path": "."})
    assert guard.stop_reason == "repeated_call"
    assert not guard.can_take_turn()


def test_a_new_stage_forgets_the_previous_hashes() -> None:
    chain = GlobalBudget()
    first = StageGuard(budget=4, chain=chain)
    assert first.allow_call("list_dir", {"path": "."})
    assert StageGuard(budget=3, chain=chain).allow_call("list_dir", {"path": "."})


def test_stage_budget_then_global_cap() -> None:
    chain = GlobalBudget(cap=5)
    stage = StageGuard(budget=4, chain=chain)
    while stage.can_take_turn():
        stage.take_turn()
    assert (stage.turns, stage.stop_reason, chain.left) == (4, "stage_budget", 1)
    second = StageGuard(budget=3, chain=chain)
    while second.can_take_turn():
        second.take_turn()
    assert (second.turns, second.stop_reason, chain.left) == (1, "global_cap", 0)


def test_an_unreadable_call_is_hashed_by_its_text() -> None:
    # Unreadable arguments parse to {}: without the raw text every slip of a tool would be the
    # same call as its argument-less form, and no repeated slip would ever be caught.
    slip = "read_file:{'path': }]"
    assert call_hash("read_file", {}, raw=slip) != call_hash("read_file", {})
    assert call_hash("read_file", {}, raw=slip) == call_hash("read_file", {}, raw=f" {slip}\n")
    guard = StageGuard(budget=4, chain=GlobalBudget())
    assert guard.allow_call("read_file", {}, raw=slip)
    assert guard.allow_call("read_file", {})
    assert guard.allow_call("read_file", {}, raw="read_file:{path=}]")
    assert not guard.allow_call("read_file", {}, raw=slip)
    assert guard.stop_reason == "repeated_call"
