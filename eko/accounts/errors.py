"""What can go wrong with an account request; the API turns each into a problem+json."""

from __future__ import annotations


class AccountError(Exception):
    """`kind` names the problem (a stable code), `status` its HTTP status."""

    def __init__(self, status: int, kind: str, title: str, detail: str | None = None) -> None:
        super().__init__(detail or title)
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail


class TooManyAttempts(AccountError):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            429,
            "too-many-signin-attempts",
            "Too many sign-in attempts",
            f"Wait {retry_after_s} s before trying again.",
        )
        self.retry_after_s = retry_after_s


def bad_credentials() -> AccountError:
    # The same answer for an unknown name and a wrong password.
    return AccountError(401, "bad-credentials", "Wrong name or password")
