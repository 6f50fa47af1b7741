"""Alignment rules of the verifier (issue 36): what two questions say in other words.

- **numbers in words**: "3 kids" is "three kids" / "trois enfants", and "3" is not "four" nor
  "quatre"; ordinals count too ("first" / "1st" / "premier" is 1, "second" / "deuxième" 2).
  `spelled_numbers` gives them as digits, for the number rule (check.py).
- **initials**: "J. K. Rowling" is not "J. R. R. Tolkien", "M. S. Dhoni" not "M. K. Gandhi":
  initials before a name on both sides that differ are another person (one side without any
  only narrows; "U.S." or "B.Tech" are not a person's initials).
- **direction**: "convert Celsius to Fahrenheit" is not "convert Fahrenheit to Celsius",
  "Is India bigger than China?" not "Is China bigger than India?", "de Paris à Lyon" not
  "de Lyon à Paris": the same words on both sides, but the one after a word that carries a
  direction (to, into, than, from, over, before, after; en, vers, que, contre, à…) is another
  one, and each side has the other's word on the far side of it. Names or not, any case,
  French agreement folded ("plus grande" / "plus grand").

- **symbols**: "C++" is not "C" nor "C#", "Notepad++" not "Notepad", an "A+" not an "A": a
  name's closing symbol (++, +, #) that the other side writes otherwise or not at all. The
  names rule reads words, which drop the symbols.

Pure string work on folded words (eko/guard/normalize.py), like every rule of the check.
"""

from __future__ import annotations

import re

from eko.guard.language import detect_language
from eko.guard.normalize import STOPWORDS, fold_words

# --- numbers written in words ---

_UNITS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
    # "un"/"une"/"one" are articles or pronouns far more often than counts; "neuf" is "new".
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "sept": 7, "huit": 8, "dix": 10,
    "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15, "seize": 16,
    "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60,
}  # fmt: skip
_SCALES = {"hundred": 100, "cent": 100, "cents": 100, "thousand": 1000, "mille": 1000}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10,
    "premier": 1, "premiere": 1, "deuxieme": 2, "seconde": 2, "troisieme": 3,
    "quatrieme": 4, "cinquieme": 5, "sixieme": 6, "septieme": 7, "huitieme": 8,
    "neuvieme": 9, "dixieme": 10,
}  # fmt: skip
# An ordinal in words is one after a determiner ("the first president", "la seconde guerre");
# elsewhere "first" / "second" are adverbs or time ("which would you watch first").
_DETERMINERS = frozenset(
    {
        "the", "a", "an", "his", "her", "its", "their", "my", "your", "our", "this", "that",
        "s", "le", "la", "les", "l", "un", "une", "du", "au", "aux", "des", "sa", "son", "ses",
        "leur", "mon", "ma", "ton", "ta", "ce", "cet", "cette", "notre", "votre",
    }
)  # fmt: skip
# "1st", "2nd", "3rd", "4th", "1er", "1re", "2e", "2eme", "3ème".
_DIGIT_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th|er|re|ere|e|eme|ieme)$")


def _spelled_step(current: int | None, word: str) -> int | None:
    """The number being read (`current`, None before one) with `word` taken in when it is a
    number word ("twenty", then "five"; "three", then "hundred"); None when it is not one."""
    if word in _UNITS:
        return (current or 0) + _UNITS[word]
    if word in _SCALES and (current is not None or word in ("hundred", "thousand")):
        return (current or 1) * _SCALES[word]
    return None


def spelled_numbers(text: str) -> frozenset[str]:
    """The numbers a text writes in words or as digit ordinals, as digits: "twenty five" ->
    25, "trois" -> 3, "third" / "3rd" / "troisième" -> 3 (the digits themselves are the
    number rule's)."""
    found: set[int] = set()
    current: int | None = None
    previous = ""
    for word in [*fold_words(text), ""]:
        if (spelled := _spelled_step(current, word)) is not None:
            current = spelled
            continue
        if current is not None:
            found.add(current)
            current = None
        if word in _ORDINALS and previous in _DETERMINERS:
            found.add(_ORDINALS[word])
        elif (ordinal := _DIGIT_ORDINAL.match(word)) is not None:
            found.add(int(ordinal.group(1)))
        previous = word
    return frozenset(str(n) for n in found)


def ordinal_value(word: str) -> int | None:
    """ "third" / "troisième" -> 3, and the regular forms "sixteenth", "seizième",
    "vingtième" -> 16, 16, 20 (folded words)."""
    if word in _ORDINALS:
        return _ORDINALS[word]
    for ending, extra in (("th", ""), ("ieme", ""), ("ieme", "e")):
        base = word[: -len(ending)] + extra if word.endswith(ending) else ""
        if base in _UNITS:
            return _UNITS[base]
    return None


def with_digits(words: list[str]) -> list[str]:
    """The words with every number, in digits, in words or as an ordinal, as "#<n>": "three
    cats" / "3 cats" -> ["#3", "cats"], "twenty five" -> ["#25"], "16e" / "sixteenth" /
    "seizième" -> ["#16"], "dix-neuvième" -> ["#19"] (the alignment rule: rules_content.py)."""
    out: list[str] = []
    current: int | None = None
    for word in [*words, ""]:
        if (spelled := _spelled_step(current, word)) is not None:
            current = spelled
            continue
        ordinal = ordinal_value(word)
        if ordinal is None and (digit := _DIGIT_ORDINAL.match(word)) is not None:
            ordinal = int(digit.group(1))
        if ordinal is not None:
            out.append(f"#{(current or 0) + ordinal}")
            current = None
            continue
        if current is not None:
            out.append(f"#{current}")
            current = None
        if word.isdigit():
            out.append(f"#{int(word)}")
        elif word:
            out.append(word)
    return out


# --- initials ---

# One to three capital initials right before a capitalised name: "J. K. Rowling", "O.J. Simpson".
_INITIALS = re.compile(r"\b((?:[A-Z]\.\s?){0,2}[A-Z]\.)\s+(?=[A-Z][a-z])")


def initials(text: str) -> tuple[str, ...]:
    """Capital initials of names, in order: "J. K. Rowling" / "J.K. Rowling" -> (J, K)."""
    return tuple(c for m in _INITIALS.finditer(text) for c in m.group(1) if c.isupper())


def initials_differ(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """Both sides write initials and they are not the same ones."""
    iq, is_ = initials(question), initials(stored)
    if not iq or not is_ or iq == is_:
        return None
    return list(iq), list(is_)


# --- a direction reversed ---

_DIRECTIONS = frozenset(
    {
        "to", "into", "than", "from", "over", "against", "before", "after", "towards",
        "toward",
        "en", "vers", "que", "qu", "contre", "avant", "apres",
    }
)  # fmt: skip
# Only in French text: "à" / "au" (folded "a" is the English article).
_FRENCH_DIRECTIONS = frozenset({"a", "au", "aux"})
_SKIP = STOPWORDS | frozenset(
    {"a", "an", "the", "le", "la", "l", "un", "une", "de", "du", "d", "des", "i", "my", "me"}
)


def _stem(word: str) -> str:
    """Folds plural and French agreement: "grande"/"grands"/"grand", "miles"/"mile"."""
    for ending in ("es", "s", "e", "x"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def _after(words: list[str], index: int) -> str | None:
    for word in words[index + 1 :]:
        if word not in _SKIP and word not in _DIRECTIONS:
            return _stem(word)
    return None


def direction_reversed(question: str, stored: str) -> tuple[str, list[str]] | None:
    """(marker, [word after it in the question, in the stored one]) when a direction word
    both sides use is followed by different words that each side has before it."""
    wq, ws = fold_words(question), fold_words(stored)
    markers = set(_DIRECTIONS)
    if detect_language(question) == "fr" and detect_language(stored) == "fr":
        markers |= _FRENCH_DIRECTIONS
    for marker in sorted(markers & set(wq) & set(ws)):
        iq = len(wq) - 1 - wq[::-1].index(marker)  # the last one: "est-ce que … que …"
        is_ = len(ws) - 1 - ws[::-1].index(marker)
        after_q, after_s = _after(wq, iq), _after(ws, is_)
        if after_q is None or after_s is None or after_q == after_s:
            continue
        before_q = {_stem(w) for w in wq[:iq]}
        before_s = {_stem(w) for w in ws[:is_]}
        if after_s in before_q and after_q in before_s:
            return marker, [after_q, after_s]
    return None


# --- a name's closing symbol ---

# A word closed by ++, + or # ("C++", "C#", "Notepad++", "A+"), not inside a longer token.
_SYMBOLIC = re.compile(r"(?<![\w+#])([^\W\d_][\w]*)(\+\+|\+|#)(?![\w+#])")


def _symbols(text: str) -> dict[str, set[str]]:
    """Each symbol-closed word's base (lower case) and the symbols it is written with."""
    found: dict[str, set[str]] = {}
    for base, symbol in _SYMBOLIC.findall(text):
        if symbol == "+" and not base[0].isupper():
            continue  # "a billion+", "5+ years": more than, not a name
        found.setdefault(base.lower(), set()).add(symbol)
    return found


def _written_bare(text: str, base: str) -> bool:
    """Whether `base` stands alone in `text` ("in C", not "C++" nor "C'est")."""
    pattern = rf"(?<![\w+#]){re.escape(base)}(?![\w+#'’])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def symbols_differ(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """The name each side writes, when a symbol-closed name on one side is written with
    another symbol or bare on the other: (["c++"], ["c"])."""
    asked, kept = _symbols(question), _symbols(stored)
    for base in sorted(asked.keys() | kept.keys()):
        on_q, on_s = asked.get(base, set()), kept.get(base, set())
        if on_q == on_s:
            continue
        if on_q and on_s:
            return sorted(base + s for s in on_q), sorted(base + s for s in on_s)
        bare_side, other = (stored, on_q) if on_q else (question, on_s)
        if _written_bare(bare_side, base):
            written = sorted(base + s for s in other)
            return (written, [base]) if on_q else ([base], written)
    return None
