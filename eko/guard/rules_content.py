"""Content-word alignment, the verifier's general rule (issue 36): two questions are the same
only when every content word of each is matched in the other.

A word is matched by the same word once folded, by an inflection of it (the light stemmer,
eko/guard/stem.py: "cats" / "cat", "grande" / "grands", "mangent" / "manger"), or by a word
of one of its synonym groups ("buy" / "purchase", "voiture" / "auto"). What is left over
decides:

- both sides keep a word the other lacks: a substitution ("Is red wine healthy?" / "… white
  wine …", "open" / "lock", "en mars" / "en octobre") — refused;
- one side only keeps words, and at least one is not a mere modifier (the lexicon's
  "really", "best", "facilement"…): a content word added ("advantages and disadvantages of
  X" / "disadvantages of X", "Is brown rice healthy?" / "Is rice healthy?") — refused when
  `additions` is "content" (the default, chosen on the benchmark's dev split: docs/guard.md),
  tolerated when it is "any" (substitutions only).

Function words (articles, pronouns, auxiliaries, prepositions, question words), initials and
one-letter grammar tokens are not content: the negation, direction, kind and initials rules
look after them. A number in digits, in words or as an ordinal is one token ("3" = "three" =
"trois"), content like any word, except the size of a list ("the 10 best books"). The word
lists are package data (eko/guard/lexicon.json), read once into the `LEXICON` constant and
passed to the rule; a pair in two languages (a multilingual entry) is not aligned.

Pure string work, like the rest of the check (`eko bench guard` prints its cost per
candidate).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from eko.guard.language import detect_language
from eko.guard.normalize import fold_words
from eko.guard.rules_align import with_digits
from eko.guard.stem import stem

Additions = Literal["content", "any"]
ADDITIONS: Additions = "content"
# One-letter tokens that are grammar (elisions, contractions, articles), not names ("R", "C").
_LETTERS = frozenset("adijlmnstyouex")
_INITIAL = re.compile(r"\b[A-Z]\.")
_GLUED = re.compile(r"(?<=\d)(?=[^\W\d_])|(?<=[^\W\d_])(?=\d)")  # "5km" -> "5 km"


class LexiconError(ValueError):
    """The word lists contradict themselves (an antonym pair inside a synonym group)."""


@dataclass(frozen=True, slots=True)
class Lexicon:
    function_words: Mapping[str, frozenset[str]]  # per language ("en", "fr")
    modifiers: frozenset[str]  # stems, both languages
    groups: Mapping[str, frozenset[int]]  # a word's stem -> the synonym groups it is in
    # Antonym pairs, each side as the stems of its word.
    antonyms: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()

    def is_function(self, word: str, language: str) -> bool:
        return word in self.function_words["fr" if language == "fr" else "en"]

    def synonyms(self, a: str, b: str) -> bool:
        return bool(self.groups.get(a, frozenset()) & self.groups.get(b, frozenset()))


def _keys(word: str) -> set[str]:
    """A listed word under the stems of both languages (a list is bilingual)."""
    return {word, stem(word, "en"), stem(word, "fr")}


def build_lexicon(data: Mapping[str, Any]) -> Lexicon:
    """A Lexicon from the JSON lists; refuses a synonym group holding an antonym pair."""
    groups: dict[str, set[int]] = {}
    for index, group in enumerate(data["synonyms"]):
        for word in group:
            if " " in word:
                continue  # one word per entry: a phrase never meets a single token
            for key in _keys(word):
                groups.setdefault(key, set()).add(index)
    for left, right in data["antonyms"]:
        shared = _groups_of(groups, left) & _groups_of(groups, right)
        if shared:
            raise LexiconError(f"antonyms {left!r} / {right!r} share synonym group {shared}")
    return Lexicon(
        function_words={lang: frozenset(words) for lang, words in data["function_words"].items()},
        modifiers=frozenset(k for w in data["modifiers"] for k in _keys(w)),
        groups={key: frozenset(ids) for key, ids in groups.items()},
        antonyms=tuple(
            (frozenset(_keys(left)), frozenset(_keys(right))) for left, right in data["antonyms"]
        ),
    )


def _groups_of(groups: Mapping[str, Iterable[int]], word: str) -> set[int]:
    return {i for key in _keys(word) for i in groups.get(key, ())}


def load_lexicon() -> Lexicon:
    """The lexicon shipped with Eko (eko/guard/lexicon.json)."""
    text = resources.files("eko.guard").joinpath("lexicon.json").read_text(encoding="utf-8")
    return build_lexicon(json.loads(text))


# Package data, read once: the default every caller passes on.
LEXICON = load_lexicon()


def content_words(text: str, language: str, lexicon: Lexicon = LEXICON) -> dict[str, str]:
    """Stem -> the word as folded, for the content words of `text`."""
    found: dict[str, str] = {}
    text = _INITIAL.sub(" ", text)  # "J. K. Rowling": the initials rule's
    words = [w for word in with_digits(fold_words(text)) for w in _GLUED.sub(" ", word).split()]
    for word in with_digits(words):
        if word.startswith("#"):
            found.setdefault(word, word)  # a number: its own key
            continue
        if word in _LETTERS or any(c.isdigit() for c in word):
            continue
        if lexicon.is_function(word, language):
            continue
        found.setdefault(stem(word, language), word)
    return found


# Question determiners: the noun after one names the kind of answer ("Which team won …?" /
# "Who won …?", "What food do pandas eat?" / "What do pandas eat?"), which a paraphrase may
# leave out.
_WH_DETERMINERS = frozenset({"what", "which", "quel", "quelle", "quels", "quelles"})
# "What other systems …" adds things rather than naming the answer's kind.
_NOT_TYPES = frozenset({"other", "others", "else", "autre", "autres"})


def answer_types(text: str, language: str) -> frozenset[str]:
    """Stems of the nouns right after a question determiner."""
    words = fold_words(text)
    return frozenset(
        stem(words[i + 1], language)
        for i, word in enumerate(words[:-1])
        if word in _WH_DETERMINERS and words[i + 1] not in _NOT_TYPES
    )


@lru_cache(maxsize=4096)
def _two_languages(question: str, stored: str) -> bool:
    languages = {detect_language(question), detect_language(stored)}
    return languages == {"en", "fr"}


@lru_cache(maxsize=4096)
def pair_language(question: str, stored: str) -> str:
    """French rules when either side is French (the language gate keeps the pair in one
    language), English otherwise."""
    return "fr" if "fr" in (detect_language(question), detect_language(stored)) else "en"


def unmatched(
    question: str, stored: str, lexicon: Lexicon = LEXICON
) -> tuple[list[str], list[str]]:
    """The content words of each side that nothing on the other side matches."""
    language = pair_language(question, stored)
    cq = content_words(question, language, lexicon)
    cs = content_words(stored, language, lexicon)
    return _left_over(cq, cs, lexicon)


def _left_over(
    cq: Mapping[str, str], cs: Mapping[str, str], lexicon: Lexicon
) -> tuple[list[str], list[str]]:
    only_q = [w for k, w in cq.items() if not _matched(k, cs, lexicon)]
    only_s = [w for k, w in cs.items() if not _matched(k, cq, lexicon)]
    return sorted(only_q), sorted(only_s)


def _matched(key: str, other: Mapping[str, str], lexicon: Lexicon) -> bool:
    return key in other or any(lexicon.synonyms(key, k) for k in other)


def unaligned(
    question: str,
    stored: str,
    lexicon: Lexicon = LEXICON,
    *,
    additions: Additions = ADDITIONS,
) -> dict[str, list[str]] | None:
    """What keeps the two questions from aligning, or None when they do. Words align within
    one language: a pair in two (an entry staff marked multilingual, served across the
    language gate) is left to the other rules."""
    if _two_languages(question, stored):
        return None
    language = pair_language(question, stored)
    cq = content_words(question, language, lexicon)
    cs = content_words(stored, language, lexicon)
    both = _antonym_added(set(cq), set(cs), lexicon)
    if both is not None:
        return both
    only_q, only_s = _left_over(cq, cs, lexicon)
    if only_q and only_s:
        return {"only_question": only_q, "only_stored": only_s}
    if additions == "any" or not (only_q or only_s):
        return None
    side = question if only_q else stored
    soft = answer_types(side, language) | list_sizes(side)
    added = [
        w
        for w in only_q or only_s
        if not _modifier(w, language, lexicon) and stem(w, language) not in soft
    ]
    if not added:
        return None
    return {"only_question": only_q, "only_stored": only_s}


def _antonym_added(kq: set[str], ks: set[str], lexicon: Lexicon) -> dict[str, list[str]] | None:
    """One side asks about both words of an antonym pair, the other about one only ("best and
    worst" / "worst", "avantages et inconvénients" / "inconvénients"): even a modifier such
    as "best" is content then."""
    if kq == ks:
        return None
    for left, right in lexicon.antonyms:
        for both, one, key in ((kq, ks, "only_question"), (ks, kq, "only_stored")):
            if both & left and both & right and bool(one & left) != bool(one & right):
                extra = sorted(both & (left if one & right else right))
                other = "only_stored" if key == "only_question" else "only_question"
                return {key: extra, other: []}
    return None


def _modifier(word: str, language: str, lexicon: Lexicon) -> bool:
    """A word a side may add alone: a listed modifier."""
    return stem(word, language) in lexicon.modifiers


# Around a number, words that make it the size of a list ("the 10 best books", "top 5"): a
# side may add such a number, not an age, a sum or a year ("getting pregnant at 19").
_LIST_WORDS = frozenset(
    {"best", "top", "greatest", "most", "worst", "meilleurs", "meilleures", "pires", "premiers"}
)


def list_sizes(text: str) -> frozenset[str]:
    words = with_digits(fold_words(text))
    return frozenset(
        word
        for i, word in enumerate(words)
        if word.startswith("#")
        and (
            (i + 1 < len(words) and words[i + 1] in _LIST_WORDS)
            or (i > 0 and words[i - 1] in _LIST_WORDS)
        )
    )
