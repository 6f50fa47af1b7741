"""Questions that need several pieces, detected by rule (no model call), and their sub-queries.

Three shapes, in English and French:

- **several people** ("What have Caroline and Melanie both painted?", "Qu'ont fait Jon et
  Gina tous les deux ?"): one sub-query per person, the pair replaced by that person and
  "both" / "tous les deux" / "in common" / "en commun" dropped;
- **several clauses** ("When did Jon open his studio and where is it?", "Quand Gina a-t-elle
  ouvert sa boutique et où ?"): one sub-query per clause, the first clause's people carried
  into the next ("where is it" knows nothing of Jon);
- **a list** ("What books has Melanie read?", "Quels livres Maria a-t-elle lus ?", "How many
  …"): the pieces are several turns saying the same kind of thing; no sub-query, but recall
  should prefer many distinct turns to a few turns with their neighbours.

The recall of each sub-query is interleaved by rank with the whole question's
(eko.memory.turn_recall), all within the same budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Shape = Literal["single", "people", "clauses", "list"]
# Neighbours recalled with each hit of a list question: none, so the budget holds more hits.
LIST_NEIGHBOURS = 0

# Capitalised words that are not names (question words, auxiliaries, pronouns, months...).
_NOT_NAMES_TEXT = """
    what when where which who whom whose why how did does do is are was were has have had can
    could would will should may might i the a an and or but in on at of for to from with by
    quel quelle quels quelles quand ou où qui que quoi pourquoi comment est sont a ont
    le la les un une des et mais il elle ils elles je tu nous vous de du en au aux
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    lgbtq lgbtq+ us u.s
"""
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
_NAME = r"[A-ZÀ-Ý][\w'’-]+"
_PAIR = re.compile(rf"\b({_NAME})\s+(?:and|et|&)\s+({_NAME})\b")
_TOGETHER = re.compile(
    r"\s*\b(?:both|in common|tous les deux|toutes les deux|tous deux|en commun|à la fois)\b",
    re.IGNORECASE,
)
_QUESTION_WORDS = (
    r"what|when|where|who|whom|which|why|how|did|does|do|is|are|was|were|has|have|"
    r"quand|où|ou|qui|que|quoi|quel|quelle|quels|quelles|pourquoi|comment|combien|est-ce"
)
_CLAUSE = re.compile(rf"\s*(?:,\s*)?\b(?:and|et)\s+(?=(?:{_QUESTION_WORDS})\b)", re.IGNORECASE)
_LIST = re.compile(
    # "What (musical) artists/bands has …", "What LGBTQ+ events has …": a plural, whatever
    # signs it is written with.
    r"^\s*(?:(?:what|which)\s+(?:[\w+/'’-]+\s+){0,2}?[\w+/'’-]*\w+s\s+"
    r"(?:has|have|does|do|did|is|are|was|were)\b"
    # "What has Melanie painted?", "Qu'est-ce que Mélanie a peint ?": all of it, so far.
    r"|what\s+(?:has|have)\s+\w+\s+\w+ed\b"
    r"|qu['’]est-ce\s+qu['’]?e?\s*\w+\s+(?:a|ont)\s+\w+(?:é|és|ée|ées|i|is|it|u|us|t)\b"
    r"|(?:what|which)\s+(?:are|were)\b.*\b\w+s\b"
    r"|how\s+many\b"
    r"|(?:quels|quelles)\s+\w+"
    r"|combien\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class MultiHop:
    shape: Shape
    # Sub-queries to recall for, on top of the whole question (empty for single and list).
    sub_queries: list[str] = field(default_factory=list)

    @property
    def needs_several(self) -> bool:
        return self.shape != "single"

    def with_phrases(self, phrases: list[str]) -> MultiHop:
        """The same shape with `phrases` (eko.memory.query_expansion) as more sub-queries."""
        return MultiHop(self.shape, list(dict.fromkeys([*self.sub_queries, *phrases])))


def names_in(text: str) -> list[str]:
    """Capitalised words that look like names, in order, deduplicated."""
    found = [
        word.rstrip("'’").removesuffix("'s").removesuffix("’s") for word in re.findall(_NAME, text)
    ]
    return list(dict.fromkeys(w for w in found if w.casefold() not in _NOT_NAMES))


def _tidy(text: str) -> str:
    return " ".join(text.split()).replace(" ?", "?").strip(" ,")


def decompose(question: str) -> MultiHop:
    """The question's shape and, for several people or clauses, its sub-queries."""
    text = " ".join(question.split())
    pair = _PAIR.search(text)
    if pair and all(name.casefold() not in _NOT_NAMES for name in pair.groups()):
        subs = []
        for name in pair.groups():
            replaced = text[: pair.start()] + name + text[pair.end() :]
            subs.append(_tidy(_TOGETHER.sub("", replaced)))
        return MultiHop("people", list(dict.fromkeys(subs)))
    clauses = [c for c in _CLAUSE.split(text) if c.strip()]
    if len(clauses) > 1:
        people = names_in(clauses[0])
        subs = [_tidy(clauses[0])]
        for clause in clauses[1:]:
            missing = [p for p in people if p not in clause]
            subs.append(_tidy(" ".join([clause, *missing])))
        return MultiHop("clauses", subs)
    if _LIST.search(text):
        return MultiHop("list")
    return MultiHop("single")
