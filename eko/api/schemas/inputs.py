"""What every request body's text and JSON values must be to be stored, and the largest
integer a query parameter takes."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator

# Integer query parameters stop here: the largest integer every JSON client represents exactly,
# well inside both databases' 64-bit integers (an unbounded one overflowed into a 500).
MAX_QUERY_INT = 2**53 - 1
# Nesting allowed in a free-form JSON value (a fact): deep enough for any real value, shallow
# enough that no recursive encoder down the line runs out of stack.
MAX_JSON_DEPTH = 32

_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def reject_unstorable_text(value: str) -> str:
    """NUL and lone UTF-16 surrogates (JSON `\\u0000`, `\\ud800`) cannot be stored: PostgreSQL
    text refuses NUL and no UTF-8 encoding has a surrogate. Refused up front (422), so nothing
    is half-stored."""
    found = _UNSTORABLE.search(value)
    if found is not None:
        what = "NUL characters" if found.group() == "\x00" else "lone UTF-16 surrogates"
        raise ValueError(f"{what} are not accepted (U+{ord(found.group()):04X})")
    return value


def reject_unstorable_json(value: Any) -> Any:
    """The same rule for a free-form JSON value, keys included, plus what a JSON column cannot
    hold: NaN and infinities, and nesting deeper than MAX_JSON_DEPTH."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:  # iterative: a deep value must not exhaust the stack here either
        item, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"JSON values nested deeper than {MAX_JSON_DEPTH} are not accepted")
        if isinstance(item, str):
            reject_unstorable_text(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError("NaN and infinite numbers are not accepted")
        elif isinstance(item, dict):
            for key, child in item.items():
                reject_unstorable_text(str(key))
                pending.append((child, depth + 1))
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return value


# Every text field a client sends has this type (length limits stay per field), every
# free-form JSON value the second.
InputText = Annotated[str, AfterValidator(reject_unstorable_text)]
InputJson = Annotated[Any, AfterValidator(reject_unstorable_json)]
