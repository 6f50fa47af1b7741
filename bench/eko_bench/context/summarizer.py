"""The extractive summarizer: a deterministic FunctionModel standing in for summary calls."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Any

from eko.llm.types import ProviderRequest

_TURN = re.compile(r'^User \((?P<name>[^)]*)\): "(?P<text>.*)"$')
_CHILD = re.compile(r'^\s*Conversation: "(?P<text>.*)"$')
_SENTENCE = re.compile(r"(?<=[.!?])\s")
_WORD = re.compile(r"[a-zà-ÿ]{6,}")
_STOP = {
    "really",
    "though",
    "always",
    "things",
    "something",
    "thanks",
    "that's",
    "would",
    "should",
    "could",
    "about",
    "there",
    "their",
    "because",
    "great",
    "awesome",
    "pretty",
}


class ExtractiveSummarizer:
    """Quotes the first sentence of evenly spaced turns (L1) or of each child summary (L2+)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: ProviderRequest) -> str:
        self.calls += 1
        schema = request.json_schema or {}
        properties = schema.get("properties", {})
        part_max = int(properties.get("conversation_summary", {}).get("maxLength", 500))
        max_topics = int(properties.get("topics", {}).get("maxItems", 2))
        body = request.messages[-1].content
        pieces = []
        for line in body.splitlines():
            turn = _TURN.match(line)
            child = _CHILD.match(line)
            if turn:
                pieces.append(f"{turn['name']}: {_first_sentence(turn['text'])}")
            elif child:
                pieces.append(_first_sentence(child["text"]))
        conversation = _spread(pieces, part_max)
        words = Counter(w for w in _WORD.findall(body.lower()) if w not in _STOP)
        answer: dict[str, Any] = {
            "conversation_summary": conversation or "Rien de notable.",
            "actions_summary": "Aucun outil n'a été utilisé.",
            "topics": [word for word, _ in words.most_common(min(2, max_topics))],
        }
        if schema.get("title") == "HigherSummary":
            answer["same_topics"] = []
        return json.dumps(answer, ensure_ascii=False)


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text.strip(), maxsplit=1)[0][:160]


def _spread(pieces: list[str], max_chars: int) -> str:
    """Evenly spaced pieces, in order, that fit in max_chars."""
    if not pieces:
        return ""
    fit = max(1, max_chars // 90)
    stride = max(1, math.ceil(len(pieces) / fit))
    chosen, used = [], 0
    for piece in pieces[::stride]:
        if used + len(piece) + 2 > max_chars:
            break
        chosen.append(piece)
        used += len(piece) + 2
    return "; ".join(chosen)
