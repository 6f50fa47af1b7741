"""A small JSON-schema checker for tool arguments (the subset the built-in tools use).

Supported: type object with properties / required / additionalProperties false; property types
string, integer, number, boolean, array; minLength, maxLength, minimum, maximum, enum.
Returns the problems as text for the model, never raises on bad input.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check_args(schema: dict[str, Any], args: Any) -> list[str]:
    """The problems of `args` against `schema` (empty: valid)."""
    if not isinstance(args, dict):
        return [f"arguments must be a JSON object, not {type(args).__name__}"]
    problems: list[str] = []
    properties: dict[str, Any] = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in args:
            problems.append(f"missing required argument {name!r}")
    for name, value in args.items():
        spec = properties.get(name)
        if spec is None:
            if schema.get("additionalProperties") is False:
                problems.append(f"unknown argument {name!r} (expected: {', '.join(properties)})")
            continue
        problems += _check_value(name, spec, value)
    return problems


def _check_value(name: str, spec: dict[str, Any], value: Any) -> list[str]:
    kind = spec.get("type")
    if isinstance(kind, str):
        allowed = _TYPES.get(kind, (object,))
        wrong = not isinstance(value, allowed) or (kind != "boolean" and isinstance(value, bool))
        if wrong:
            return [f"argument {name!r} must be {kind}, not {type(value).__name__}"]
    problems = []
    if "enum" in spec and value not in spec["enum"]:
        problems.append(f"argument {name!r} must be one of {spec['enum']}")
    if isinstance(value, str):
        if len(value) < int(spec.get("minLength", 0)):
            problems.append(f"argument {name!r} is too short")
        if "maxLength" in spec and len(value) > int(spec["maxLength"]):
            problems.append(f"argument {name!r} is longer than {spec['maxLength']} characters")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in spec and value < spec["minimum"]:
            problems.append(f"argument {name!r} must be >= {spec['minimum']}")
        if "maximum" in spec and value > spec["maximum"]:
            problems.append(f"argument {name!r} must be <= {spec['maximum']}")
    return problems
