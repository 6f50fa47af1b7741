"""Who may be served a cached answer: the scope is part of every entry's key.

    persona:<persona>                    shared: every user talking to this persona
    persona:<persona>|user:<public id>   private: only this user (answers that may have used
                                         this user's conversation)

A room's persona is Eko's tenant boundary today (rooms carry no other owner); when tenants
arrive, "tenant:<t>|" goes in front and nothing else changes. A lookup searches the shared scope
and the asker's own private scope, never another user's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PART = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class InvalidScope(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Scope:
    persona: str
    # The public id of the only user this entry may be served to; None = shared.
    user_public_id: str | None = None

    def __post_init__(self) -> None:
        if not _PART.match(self.persona):
            raise InvalidScope(f"bad persona in scope: {self.persona!r}")
        if self.user_public_id is not None and not _PART.match(self.user_public_id):
            raise InvalidScope(f"bad user id in scope: {self.user_public_id!r}")

    @property
    def key(self) -> str:
        shared = f"persona:{self.persona}"
        return shared if self.user_public_id is None else f"{shared}|user:{self.user_public_id}"

    @property
    def shared(self) -> bool:
        return self.user_public_id is None

    @property
    def kind(self) -> str:
        return "shared" if self.shared else "private"

    def as_shared(self) -> Scope:
        return Scope(self.persona)

    @classmethod
    def parse(cls, key: str) -> Scope:
        match = re.fullmatch(r"persona:([^|]+)(?:\|user:([^|]+))?", key)
        if match is None:
            raise InvalidScope(f"not a memory guard scope: {key!r}")
        return cls(match.group(1), match.group(2))


def lookup_scopes(persona: str, user_public_id: str) -> list[Scope]:
    """The scopes one user may be served from in a room of this persona: shared, then own."""
    return [Scope(persona), Scope(persona, user_public_id)]
