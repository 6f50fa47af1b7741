"""The values the topics module hands out: merge proposals and decisions, listed and found
topics, and the rule that cleans a topic's name."""

from __future__ import annotations

from dataclasses import dataclass, field

from eko.memory.text import one_line
from eko.store.memory_models import Topic

MAX_TOPIC_CHARS = 80


@dataclass(frozen=True, slots=True)
class SameTopicProposal:
    first: str
    second: str
    confidence: float


@dataclass(frozen=True, slots=True)
class TopicDecision:
    action: str  # merged | related | ignored
    first: str
    second: str
    confidence: float
    reason: str = ""

    def as_meta(self) -> dict[str, object]:
        return {
            "action": self.action,
            "first": self.first,
            "second": self.second,
            "confidence": round(self.confidence, 3),
            "reason": self.reason,
        }


@dataclass(slots=True)
class TopicView:
    topic: Topic
    aliases: list[str] = field(default_factory=list)
    related: list[tuple[Topic, float]] = field(default_factory=list)
    summary_count: int = 0


@dataclass(frozen=True, slots=True)
class TopicHit:
    topic: Topic
    score: float


def clean_topic_name(name: str) -> str:
    return one_line(name)[:MAX_TOPIC_CHARS].strip(" .,;:-")
