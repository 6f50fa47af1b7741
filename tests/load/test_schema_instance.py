"""The fake upstream's structured answers: minimal values valid for the schemas Eko sends."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from eko.chat.engine.orchestrator_contract import output_model
from eko.memory.extraction import extraction_output_model
from eko.memory.summaries.calls import summary_output_model
from eko_bench.load.schema_instance import minimal_instance


@pytest.mark.parametrize(
    "model",
    [
        output_model(("billing", "travel")),
        output_model(()),
        summary_output_model(part_max_chars=500, max_topics=4, higher=False),
        summary_output_model(part_max_chars=500, max_topics=4, higher=True),
        extraction_output_model(),
    ],
    ids=["orchestrator-scopes", "orchestrator", "summary-l1", "summary-higher", "extraction"],
)
def test_every_output_model_eko_asks_for_accepts_its_minimal_instance(
    model: type[BaseModel],
) -> None:
    model.model_validate(minimal_instance(model.model_json_schema()))


def test_required_properties_only_with_first_enum_and_lowest_numbers() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["fact", "goal"]},
            "score": {"type": "number", "minimum": 0.25, "maximum": 1},
            "count": {"type": "integer", "exclusiveMinimum": 3},
            "below": {"type": "integer", "maximum": -2},
            "done": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "optional": {"type": "string"},
        },
        "required": ["kind", "score", "count", "below", "done", "tags"],
    }
    assert minimal_instance(schema) == {
        "kind": "fact",
        "score": 0.25,
        "count": 4,
        "below": -2,
        "done": False,
        "tags": [],
    }


def test_strings_fit_their_length_bounds() -> None:
    assert minimal_instance({"type": "string", "maxLength": 1}) == "o"
    assert minimal_instance({"type": "string", "minLength": 5}) == "okxxx"
    assert minimal_instance({"type": "string", "format": "date"}) == "2026-01-01"


def test_refs_nested_objects_min_items_and_unions() -> None:
    schema: dict[str, Any] = {
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "label": {"const": "p"}},
                "required": ["x", "label"],
            }
        },
        "type": "object",
        "properties": {
            "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}, "minItems": 2},
            "maybe": {"anyOf": [{"type": "integer", "minimum": 7}, {"type": "null"}]},
            "either": {"type": ["null", "string"]},
            "merged": {
                "allOf": [
                    {"$ref": "#/$defs/Point"},
                    {"properties": {"y": {"type": "integer"}}, "required": ["y"]},
                ]
            },
        },
        "required": ["points", "maybe", "either", "merged"],
    }
    assert minimal_instance(schema) == {
        "points": [{"x": 0, "label": "p"}, {"x": 0, "label": "p"}],
        "maybe": 7,
        "either": "ok",
        "merged": {"x": 0, "label": "p", "y": 0},
    }


def test_a_ref_cycle_fails_instead_of_recursing_forever() -> None:
    schema: dict[str, Any] = {"$defs": {"Loop": {"$ref": "#/$defs/Loop"}}, "$ref": "#/$defs/Loop"}
    with pytest.raises(ValueError, match="too deep"):
        minimal_instance(schema)
