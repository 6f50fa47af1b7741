"""Bounded field types for the structured outputs asked of the model.

The bounds go into the JSON schema (maxLength / maxItems), which keeps a grammar-constrained
local model inside its token budget; validation then clips instead of failing, so a provider
without a grammar that writes a little too much is trimmed rather than re-asked.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from eko.memory.text import clip


def bounded_text(max_chars: int) -> Any:
    def trim(value: Any) -> Any:
        return clip(value, max_chars) if isinstance(value, str) else value

    return Annotated[str, BeforeValidator(trim), Field(max_length=max_chars)]


def bounded_list(item: Any, max_items: int) -> Any:
    def trim(value: Any) -> Any:
        return value[:max_items] if isinstance(value, list) else value

    return Annotated[list[item], BeforeValidator(trim), Field(max_length=max_items)]


def _clamp_unit(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return value


# A confidence from 0 to 1; out-of-range numbers are clamped, not rejected.
Confidence = Annotated[float, BeforeValidator(_clamp_unit)]
