"""Which items proposed by the extraction call are written: what the user said, and lasts.

A small local model proposes an item for almost every exchange — the assistant's own answer,
the user's question, today's mood. These rules keep an item only when:
- the user said it: at least MIN_SAID_SHARE of its significant words come from what the user
  stated (or the message they answer), and no fewer than the reply's own words. A
  question states nothing but its lead-in ("I'm allergic to peanuts, any recipe?"): "What is
  the capital of Australia?" + "Canberra." is general knowledge, not a memory of the user;
- it says something beyond its subject, and is a statement (a curiosity may be a question);
- it is not a request ("asks", "demande"), a hypothesis ("if…", "si…") or about today.
A curiosity (kind "goal": something to ask about later) is itself a question or a request
("Ask Alice whether…"): it needs only to name something the user said, no less than the
reply does.
Measured by `eko bench extract` (bench/eko_bench/bench_extract.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from eko.store.message_search import query_words
from eko.text import STEM_CHARS, fold_plain, has_phrase

WORDS_FILE = Path(__file__).with_name("extraction_words.json")
# Share of an item's significant words that must come from what the user wrote.
MIN_SAID_SHARE = 0.34


@dataclass(frozen=True, slots=True)
class ProposedItem:
    kind: str
    subject: str
    content: str


@dataclass(frozen=True, slots=True)
class _Lists:
    transient: tuple[str, ...]
    request: tuple[str, ...]
    hypothesis: tuple[str, ...]


@cache
def _lists() -> _Lists:
    raw = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    return _Lists(tuple(raw["transient"]), tuple(raw["request"]), tuple(raw["hypothesis"]))


def _stems(text: str, ignore: frozenset[str]) -> list[str]:
    return [w[:STEM_CHARS] for w in query_words(text) if w not in ignore]


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_LAST_CLAUSE = re.compile(r"^(.*)[,;:—–]")


def stated(text: str) -> str:
    """What a message states: its sentences, each question cut to its lead-in clause."""
    kept = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if not sentence.endswith("?"):
            kept.append(sentence)
        elif lead_in := _LAST_CLAUSE.match(sentence):
            kept.append(lead_in.group(1))
    return " ".join(kept)


def worth_writing(
    item: ProposedItem,
    *,
    user_text: str,
    answered_text: str | None,
    reply_text: str | None,
    names: tuple[str, ...],
) -> bool:
    """Whether a proposed item is kept; `names`: the user's and the assistant's names."""
    content = fold_plain(item.content)
    if not content or content == fold_plain(item.subject):
        return False
    if item.kind != "goal" and item.content.rstrip().endswith("?"):
        return False
    lists = _lists()
    first_word = content.split()[0]
    curiosity = item.kind == "goal"
    if not curiosity and (
        first_word in lists.hypothesis or has_phrase(content, lists.transient + lists.request)
    ):
        return False
    ignore = frozenset(w for name in names for w in query_words(name))
    words = _stems(item.content, ignore)
    if not words:
        return False
    said = set(_stems(f"{stated(user_text)} {answered_text or ''}", ignore))
    # The reply's echo of the user's words is still the user's: only its own words count.
    replied = set(_stems(reply_text or "", ignore)) - said
    said_share = sum(w in said for w in words) / len(words)
    replied_share = sum(w in replied for w in words) / len(words)
    if curiosity:
        return said_share > 0 and said_share >= replied_share
    return said_share >= MIN_SAID_SHARE and said_share >= replied_share
