"""The memory guard: a scoped semantic cache of validated answers (docs/guard.md)."""

from eko.guard.scope import Scope, lookup_scopes
from eko.guard.service import GuardService, Hit, Learned, Lookup, NotLearnable

__all__ = ["GuardService", "Hit", "Learned", "Lookup", "NotLearnable", "Scope", "lookup_scopes"]
