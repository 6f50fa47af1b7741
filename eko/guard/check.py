"""The false-hit check: a cheap second opinion after the cosine says "same question".

Cosine similarity of sentence embeddings cannot tell a question from its negation or from the
same question about another thing ("how do I learn Python" / "… Java"): both score ≥ 0.9 with
every small embedder measured (see docs/guard.md). Before serving a cached answer, the words
that carry the difference must agree:

- negation: both questions negated, or neither ("not", "never", "ne … pas", "sans" …);
- numbers: no number swapped for another ("Python 2" is not "Python 3");
- names: no name swapped for another (capitalized words inside a sentence, acronyms):
  "learn Java" is not "learn Python", wherever the other side writes it in lower case.

Then the verifier's string rules (eko/guard/rules.py): a deictic question ("what does this
mean?") on either side, a code or version swapped ("iPhone 6" / "6s"), the same names in an
order that matters ("A beat B" / "B beat A").

Last, the content-word alignment (eko/guard/rules_content.py, issue 36): every content word
of each question must meet its match in the other — the same word, an inflection or a
synonym — so "Is brown rice healthy?" is not "Is rice healthy?" and "in March" is not "in
October", while "How should I feed my cat?" is "How do I feed my cats?". Pure string work:
under a millisecond per candidate.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from eko.guard.normalize import STOPWORDS, fold_words
from eko.guard.rules import codes_swapped, is_deictic, order_swapped
from eko.guard.rules_align import (
    direction_reversed,
    initials_differ,
    spelled_numbers,
    symbols_differ,
)
from eko.guard.rules_content import LEXICON, Lexicon, unaligned
from eko.guard.rules_frames import FRAME_RULES, frame_failures
from eko.guard.rules_mood import manner_against_fact, moods_differ
from eko.guard.rules_words import counts_differ, kinds_differ, opposites

# Markers of a negated question, in English and French (after fold_words: "n't" -> "not",
# "n'" -> "ne"). "plus"/"personne" are left out: without "ne" they mean "more"/"person".
NEGATIONS = frozenset(
    {
        "not", "no", "never", "nor", "neither", "none", "nobody", "nothing", "nowhere",
        "without",
        "ne", "pas", "jamais", "aucun", "aucune", "rien", "sans", "ni", "nul", "nulle",
    }
)  # fmt: skip
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# A token of the original text: letters/digits with inner apostrophes or dashes.
_TOKEN = re.compile(r"[^\W_][\w'’-]*")
_SENTENCE_END = re.compile(r"[.!?…:;]\s*$")


@dataclass(frozen=True, slots=True)
class CheckResult:
    passed: bool
    # Rules that failed: "negation", "numbers", "names".
    failed: tuple[str, ...] = ()
    # What differed, for staff and metadata: e.g. {"names": {"only_question": ["java"], ...}}.
    details: dict[str, Any] = field(default_factory=dict)

    def as_meta(self) -> dict[str, Any]:
        return {"passed": self.passed, "failed": list(self.failed), "details": self.details}


# Every rule, in the order they run; the verifier's string rules come from eko/guard/rules.py.
RULES = (
    "negation", "numbers", "names", "deictic", "codes", "order", "kind", "opposites", "counts",
    *FRAME_RULES, "mood", "initials", "direction", "content",
)  # fmt: skip
# The rules before the verifier (issue 17), for the benchmark's comparison.
BASE_RULES = ("negation", "numbers", "names")


def false_hit_check(
    question: str,
    stored: str,
    *,
    rules: Collection[str] = RULES,
    lexicon: Lexicon = LEXICON,
) -> CheckResult:
    """Do `question` and the stored question agree on negation, numbers and names, and is
    neither deictic, nor a code/version swap, nor the same names in a meaningful other order,
    and does every content word of each meet its match in the other (`lexicon`:
    rules_content.py)?"""
    failed: list[str] = []
    details: dict[str, Any] = {}
    if "deictic" in rules:
        deictic = {"question": is_deictic(question), "stored": is_deictic(stored)}
        if deictic["question"] or deictic["stored"]:
            failed.append("deictic")
            details["deictic"] = deictic
    neg_q, neg_s = is_negated(question), is_negated(stored)
    if "negation" in rules and neg_q != neg_s:
        failed.append("negation")
        details["negation"] = {"question": neg_q, "stored": neg_s}
    # Digits and numbers in words alike ("3" / "three" / "trois", "3rd" / "third"):
    # rules_align.py.
    num_q = numbers(question) | spelled_numbers(question)
    num_s = numbers(stored) | spelled_numbers(stored)
    if "numbers" in rules and _swapped(num_q - num_s, num_s - num_q):
        failed.append("numbers")
        details["numbers"] = {
            "only_question": sorted(num_q - num_s),
            "only_stored": sorted(num_s - num_q),
        }
    # A name on one side must be a word of the other, whatever its case there: users type
    # "python" as often as "Python".
    only_q = sorted(n for n in names(question) if not _mentions(stored, n))
    only_s = sorted(n for n in names(stored) if not _mentions(question, n))
    # A side typed without capitals cannot show its names: its own words stand in for them
    # ("how do i learn java" vs "How do I learn Python?").
    if only_s and not only_q and not has_case(question):
        only_q = _unshared_words(question, stored)
    if only_q and not only_s and not has_case(stored):
        only_s = _unshared_words(stored, question)
    if "names" in rules and _swapped(only_q, only_s):
        failed.append("names")
        details["names"] = {"only_question": only_q, "only_stored": only_s}
    # Words drop a name's closing symbol: "C++" against "C" or "C#" (rules_align.py).
    symbols = (
        symbols_differ(question, stored) if "names" in rules and "names" not in failed else None
    )
    if symbols is not None:
        failed.append("names")
        details["names"] = {"only_question": symbols[0], "only_stored": symbols[1]}
    # A code swap that is a number swap ("Python 2" / "Python 3") is reported once, as numbers.
    swapped_codes = (
        codes_swapped(question, stored) if "codes" in rules and "numbers" not in failed else None
    )
    if swapped_codes is not None:
        failed.append("codes")
        details["codes"] = {"only_question": swapped_codes[0], "only_stored": swapped_codes[1]}
    order = order_swapped(question, stored) if "order" in rules else None
    if order is not None:
        failed.append("order")
        details["order"] = {"question_order": order}
    kinds = kinds_differ(question, stored) if "kind" in rules else None
    if kinds is not None:
        failed.append("kind")
        details["kind"] = {"question": kinds[0], "stored": kinds[1]}
    opposite = opposites(question, stored) if "opposites" in rules else None
    if opposite is not None:
        failed.append("opposites")
        details["opposites"] = {"question": opposite[0], "stored": opposite[1]}
    counted = (
        counts_differ(question, stored) if "counts" in rules and "numbers" not in failed else None
    )
    if counted is not None:
        failed.append("counts")
        details["counts"] = counted
    frames = frame_failures(question, stored, rules, already=failed)  # rules_frames.py
    failed += frames
    details.update(frames)
    # rules_mood.py: a past fact, a prediction, an opinion or a wish.
    moods = moods_differ(question, stored) if "mood" in rules else None
    if moods is not None:
        failed.append("mood")
        details["mood"] = {"question": moods[0], "stored": moods[1]}
    # rules_mood.py: "How does X work?" against "Does X work?" (the frame rule above reads a
    # yes/no against the definite kinds).
    manner = (
        manner_against_fact(question, stored)
        if "yesno" in rules and "yesno" not in failed
        else None
    )
    if manner is not None:
        failed.append("yesno")
        details["yesno"] = manner
    # rules_align.py: initials of another person, a direction reversed.
    initials = initials_differ(question, stored) if "initials" in rules else None
    if initials is not None:
        failed.append("initials")
        details["initials"] = {"question": initials[0], "stored": initials[1]}
    reversed_ = direction_reversed(question, stored) if "direction" in rules else None
    if reversed_ is not None and "order" not in failed:
        failed.append("direction")
        details["direction"] = {"marker": reversed_[0], "after": reversed_[1]}
    # rules_content.py: a content word of either side that the other does not match; the
    # catch-all, so only when no named rule explains the difference already.
    left_over = unaligned(question, stored, lexicon) if "content" in rules and not failed else None
    if left_over is not None:
        failed.append("content")
        details["content"] = left_over
    return CheckResult(not failed, tuple(failed), details)


def _swapped(only_question: Collection[str], only_stored: Collection[str]) -> bool:
    """A substitution (each side has one the other lacks) changes the question: "Python 2" vs
    "Python 3", "learn Java" vs "learn Python". A mere addition ("… in Sydney", "the 10 best")
    only narrows it, and real paraphrases do that all the time (measured: docs/guard.md)."""
    return bool(only_question) and bool(only_stored)


def is_negated(text: str) -> bool:
    return any(word in NEGATIONS for word in fold_words(text))


def numbers(text: str) -> frozenset[str]:
    """Numbers as written, with "1,5" == "1.5" and leading zeros dropped."""
    found = set()
    for match in _NUMBER.findall(text):
        value = match.replace(",", ".")
        whole, _, fraction = value.partition(".")
        whole = whole.lstrip("0") or "0"
        fraction = fraction.rstrip("0")
        found.add(f"{whole}.{fraction}" if fraction else whole)
    return frozenset(found)


def names(text: str) -> frozenset[str]:
    """Proper names and acronyms, folded: capitalized words that do not start a sentence.

    Text with no usable case (all lower, all upper, or Title Case Throughout) gives none.
    """
    candidates: list[str] = []  # capitalized tokens that are not there for grammar
    inner = 0  # tokens that neither start a sentence nor are "I"
    for index, match in enumerate(_TOKEN.finditer(text)):
        token = match.group(0)
        words = fold_words(token)
        elided = re.match(r"^([^\W\d_]{1,2})['’](.+)$", token)
        if elided and len(words) > 1 and words[0] in _ELISIONS:
            token, words = elided.group(2), words[1:]  # l'Australie
        if not words or words[0] in _NOT_NAMES or not token:
            continue
        starts = index == 0 or bool(_SENTENCE_END.search(text[: match.start()]))
        inner += not starts
        if token[0].isupper() and (not starts or _is_acronym(token)):
            candidates.append(words[0])
    # All lower case, or Title Case Throughout: case says nothing about names there.
    if not candidates or all(c.isupper() for c in text if c.isalpha()):
        return frozenset()
    if len(candidates) > inner / 2 and len(candidates) > 1:
        return frozenset()
    return frozenset(candidates)


def has_case(text: str) -> bool:
    """Whether capitals in this text can mark names (not all lower, not all upper case)."""
    letters = [c for c in text if c.isalpha()]
    return any(c.isupper() for c in letters) and not all(c.isupper() for c in letters)


def _unshared_words(text: str, other: str) -> list[str]:
    """Content words of `text` that `other` does not mention."""
    return sorted(
        {
            w
            for w in fold_words(text)
            if len(w) > 2 and w not in STOPWORDS and not _mentions(other, w)
        }
    )


def _mentions(text: str, name: str) -> bool:
    """Whether `name` (folded) is a word of `text`, allowing a plural either way."""
    words = set(fold_words(text))
    return name in words or name + "s" in words or (name.endswith("s") and name[:-1] in words)


# French elided words before a name: "l'Australie", "d'Ubuntu", "qu'Apple".
_ELISIONS = frozenset({"l", "d", "qu", "j", "s", "c", "m", "t", "ne"})
# Capitalized for grammar, not names.
_NOT_NAMES = frozenset({"i", "im", "ive", "id", "ill"})


def _is_acronym(token: str) -> bool:
    return sum(c.isupper() for c in token) >= 2
