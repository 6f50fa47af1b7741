"""An account error (eko.accounts.errors) as the API's problem+json."""

from __future__ import annotations

from eko.accounts.errors import AccountError, TooManyAttempts
from eko.api.problems import Problem


def as_problem(error: AccountError) -> Problem:
    headers = (
        {"Retry-After": str(error.retry_after_s)} if isinstance(error, TooManyAttempts) else None
    )
    return Problem(error.status, error.kind, error.title, error.detail, headers=headers)
