"""A minimal JSON value valid for a JSON schema: what the fake upstream answers to structured calls.

Minimal means cheapest to build and to check, not random: required properties only, the first
enum value, the lowest allowed number, arrays at their minimum length, short strings within
maxLength. It covers what pydantic writes (`$ref`/`$defs`, `anyOf` for optionals, `allOf`,
`const`, `enum`, formats) and falls back to the simplest value for keywords it ignores
(`pattern`, `multipleOf`): Eko validates every structured answer, so a miss shows up there.
"""

from __future__ import annotations

import math
from typing import Any

_SHORT_TEXT = "ok"
_FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "email": "a@example.com",
    "uri": "http://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
# $ref chains deeper than this are cycles (a schema that can only be satisfied by nesting).
_MAX_DEPTH = 32


def minimal_instance(schema: dict[str, Any]) -> Any:
    """The minimal value `schema` accepts (see the module docstring for what minimal means)."""
    return _instance(schema, schema, 0)


def _instance(schema: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("schema nesting too deep (a $ref cycle?)")
    if not isinstance(schema, dict):  # `true` / `false` schemas: anything goes
        return None
    if "$ref" in schema:
        return _instance(_resolve(schema["$ref"], root), root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "allOf" in schema:
        return _instance(_merge(schema, root), root, depth + 1)
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _instance(schema[key][0], root, depth + 1)
    kind = _type_of(schema)
    if kind == "object":
        return _object(schema, root, depth)
    if kind == "array":
        return _array(schema, root, depth)
    if kind == "string":
        return _string(schema)
    if kind in ("number", "integer"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    return None


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        # Prefer a real value to null when several types are allowed.
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        if "properties" in schema or "required" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
        return "null"
    return str(kind)


def _object(schema: dict[str, Any], root: dict[str, Any], depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    names = list(schema.get("required") or [])
    # minProperties beyond the required ones: the first optional properties fill the gap.
    for name in properties:
        if len(names) >= int(schema.get("minProperties", 0)):
            break
        if name not in names:
            names.append(name)
    return {name: _instance(properties.get(name, {}), root, depth + 1) for name in names}


def _array(schema: dict[str, Any], root: dict[str, Any], depth: int) -> list[Any]:
    prefix = list(schema.get("prefixItems") or [])
    count = max(int(schema.get("minItems", 0)), 0)
    items = [_instance(s, root, depth + 1) for s in prefix[:count]]
    item_schema = schema.get("items", {})
    while len(items) < count:
        items.append(_instance(item_schema, root, depth + 1))
    if schema.get("uniqueItems") and len(items) > 1 and len({repr(i) for i in items}) < len(items):
        raise ValueError("cannot build distinct minimal items for a uniqueItems array")
    return items


def _string(schema: dict[str, Any]) -> str:
    text = _FORMATS.get(str(schema.get("format", "")), _SHORT_TEXT)
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    if len(text) < low:
        text = text + "x" * (low - len(text))
    if high is not None and len(text) > int(high):
        text = text[: int(high)]
    return text


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    step = 1 if integer else 0.5
    if "minimum" in schema:
        value: float = schema["minimum"]
    elif "exclusiveMinimum" in schema:
        value = schema["exclusiveMinimum"] + step
    else:
        value = 0
    if "maximum" in schema and value > schema["maximum"]:
        value = schema["maximum"]
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - step
    if integer:
        return math.ceil(value)
    return value


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref are supported, not {ref!r}")
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _merge(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """allOf folded into one schema: properties and required united, other keywords overlaid."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        while isinstance(part, dict) and "$ref" in part:
            part = _resolve(part["$ref"], root)
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties":
                merged["properties"] = {**merged.get("properties", {}), **value}
            elif key == "required":
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged
