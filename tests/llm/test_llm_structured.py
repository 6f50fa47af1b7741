"""Parsing structured answers: fences, whitespace, and short validation summaries."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from eko.llm.structured import StructuredOutputError, parse_output, strip_json_fence


class Verdict(BaseModel):
    confidence: float = Field(ge=0, le=1)
    decision: str


@pytest.mark.parametrize(
    "text",
    [
        '{"confidence": 0.9, "decision": "answer"}',
        '  \n{"confidence": 0.9, "decision": "answer"}\n\n',
        '```json\n{"confidence": 0.9, "decision": "answer"}\n```',
        '\n```\n{"confidence": 0.9, "decision": "answer"}\n```  ',
        '```json {"confidence": 0.9, "decision": "answer"}```',
    ],
)
def test_accepts_whitespace_and_fences(text: str) -> None:
    assert parse_output(text, Verdict) == Verdict(confidence=0.9, decision="answer")


def test_raw_newlines_inside_strings_are_tolerated() -> None:
    text = '{"confidence": 0.5, "decision": "line one\nline two"}'
    assert parse_output(text, Verdict).decision == "line one\nline two"


def test_fence_stripping_leaves_plain_text_alone() -> None:
    assert strip_json_fence("  not json ") == "not json"


@pytest.mark.parametrize(
    ("text", "expected_fragment"),
    [
        ("", "empty answer"),
        ("Sure! Here is the JSON.", "Invalid JSON"),
        ('{"confidence": 2, "decision": "x"}', "confidence: Input should be less than or equal"),
        ('{"confidence": 0.5}', "decision: Field required"),
        ('{"confidence": 0.5, "decision": "x"', "EOF while parsing"),
    ],
)
def test_rejects_with_a_short_reason(text: str, expected_fragment: str) -> None:
    with pytest.raises(StructuredOutputError) as caught:
        parse_output(text, Verdict)
    assert expected_fragment in caught.value.summary
    assert "\n" not in caught.value.summary
    assert len(caught.value.summary) <= 300


def test_many_errors_are_counted_not_listed() -> None:
    class Wide(BaseModel):
        a: int
        b: int
        c: int
        d: int
        e: int

    with pytest.raises(StructuredOutputError) as caught:
        parse_output("{}", Wide)
    assert caught.value.summary.endswith("(+2 more)")
