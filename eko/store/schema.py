"""Every model module, imported once so `Base.metadata` describes the whole schema.

Migrations (autogenerate, schema tests) read the metadata from here. A feature that adds a
model module adds one import line below.
"""

from __future__ import annotations

from eko.store import models
from eko.store.models import Base

metadata = Base.metadata

__all__ = ["Base", "metadata", "models"]
