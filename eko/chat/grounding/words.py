"""The word lists of the grounding rules, read once from personal_words.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("personal_words.json")


@dataclass(frozen=True, slots=True)
class WordLists:
    possessives: frozenset[str]
    skip_between: frozenset[str]
    # topic -> its words (English and French together), people first, then facts of life.
    people: dict[str, frozenset[str]]
    life: dict[str, frozenset[str]]
    objects: frozenset[str]
    advice: frozenset[str]
    openers_not_facts: frozenset[str]
    opener_fact_followers: frozenset[str]
    self_phrases: tuple[str, ...]
    identity_phrases: tuple[str, ...]
    dont_know: tuple[str, ...]
    # A fact question with the user as subject: English wh-word + "do I"; French wh-word
    # (after a preposition or not) + "je".
    wh_en: frozenset[str]
    aux_en: frozenset[str]
    wh_fr: frozenset[str]
    lead_fr: frozenset[str]
    subject_fr: frozenset[str]
    question_stopwords: frozenset[str]


@cache
def word_lists(path: Path = WORDS_FILE) -> WordLists:
    raw = json.loads(path.read_text(encoding="utf-8"))

    def topics(name: str) -> dict[str, frozenset[str]]:
        return {topic: frozenset(words) for topic, words in raw[name].items()}

    return WordLists(
        possessives=frozenset(raw["possessives"]),
        skip_between=frozenset(raw["skip_between"]),
        people=topics("people"),
        life=topics("life"),
        objects=frozenset(raw["objects"]),
        advice=frozenset(raw["advice"]),
        openers_not_facts=frozenset(raw["openers_not_facts"]),
        opener_fact_followers=frozenset(raw["opener_fact_followers"]),
        self_phrases=tuple(raw["self"]),
        identity_phrases=tuple(raw["identity"]),
        dont_know=tuple(raw["dont_know"]),
        wh_en=frozenset(raw["first_person"]["wh_en"]),
        aux_en=frozenset(raw["first_person"]["aux_en"]),
        wh_fr=frozenset(raw["first_person"]["wh_fr"]),
        lead_fr=frozenset(raw["first_person"]["lead_fr"]),
        subject_fr=frozenset(raw["first_person"]["subject_fr"]),
        question_stopwords=frozenset(raw["question_stopwords"]),
    )
