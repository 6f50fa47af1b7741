"""Why no model answered, in a person's words: busy, timeout, unreachable or error."""

from __future__ import annotations

import pytest

from eko.llm.errors import (
    AllProvidersFailed,
    InvalidOutput,
    ProviderHTTPError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.failures import cause_of_error, cause_of_walk, failure_of
from eko.llm.types import Attempt, FailureCause


@pytest.mark.parametrize(
    ("exc", "slow_means_busy", "cause"),
    [
        (TimeoutError(), False, "timeout"),
        (TimeoutError(), True, "busy"),  # the local model: out of time in its line
        (ProviderTimeout("p", "slow"), False, "timeout"),
        (ProviderTimeout("p", "slow"), True, "busy"),
        (ProviderUnavailable("p", "refused"), False, "unreachable"),
        (ProviderHTTPError("p", 502, "bad gateway"), False, "error"),
        (InvalidOutput("p", "garbage"), False, "error"),
        (RuntimeError("bug"), False, "error"),
    ],
)
def test_each_failure_has_its_cause(
    exc: Exception, slow_means_busy: bool, cause: FailureCause
) -> None:
    failure = failure_of(exc, "p", left=1.0, budget_is_share=False, slow_means_busy=slow_means_busy)
    assert failure.cause == cause


def _failed(cause: FailureCause | None) -> Attempt:
    return Attempt("p", "m", "error", 1.0, error="x", cause=cause)


def test_the_walk_says_the_most_telling_cause() -> None:
    assert cause_of_walk([_failed("error"), _failed("unreachable")]) == "unreachable"
    assert cause_of_walk([_failed("unreachable"), _failed("timeout")]) == "timeout"
    assert cause_of_walk([_failed("timeout"), _failed("busy")]) == "busy"
    assert cause_of_walk([_failed(None)]) == "error"
    # Every circuit open: nobody was asked.
    assert cause_of_walk([], skipped=["p"]) == "unreachable"
    # The message's deadline spent: a timeout, unless the local model was busy.
    assert cause_of_walk([_failed("error")], timed_out=True) == "timeout"
    assert cause_of_walk([_failed("busy")], timed_out=True) == "busy"


def test_an_error_raised_by_the_runtime_has_a_cause() -> None:
    walked = AllProvidersFailed((_failed("unreachable"),), skipped=("q",))
    assert cause_of_error(walked) == "unreachable"
    assert cause_of_error(AllProvidersFailed((), skipped=("p",))) == "unreachable"
    assert cause_of_error(ProviderTimeout("p", "slow")) == "timeout"
