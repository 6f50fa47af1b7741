"""Rules of the verifier on the question's frame, found on the benchmark's dev split only:

- **yesno**: "Do women cheat?" is not "When do women cheat?": a yes/no question (it starts
  with an auxiliary: do, is, can, est-ce que …, and asks no question word) against one that
  asks a definite kind (who, where, when, why, how many; eko/guard/rules_words.py).
- **units**: "lose 25 kg" is not "lose 25 pounds": the same number with another unit.
- **edition**: "Oregon Trail" is not "Oregon Trail 2", "iPhone" not "iPhone 7": a number
  right after a word both sides share, on one side only (an edition, a model, a version).
- **compared**: "the difference between physics and engineering physics" is not "… between
  mechanical engineering and engineering physics": two questions that compare things
  ("difference between", "vs", "compare") must compare the same ones (content words).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from eko.guard.normalize import STOPWORDS, fold_words
from eko.guard.rules_words import question_kinds

# --- yes/no against a definite kind ---

_OPEN = frozenset({"what", "which", "quel", "quelle", "quels", "quelles", "lequel", "laquelle"})

_AUXILIARIES = frozenset(
    {
        "do", "does", "did", "is", "are", "was", "were", "am", "can", "could", "will",
        "would", "should", "shall", "may", "might", "must", "has", "have", "had",
        "est", "peut", "peux", "puis", "dois", "doit", "faut", "sont", "suis", "ai", "a",
    }
)  # fmt: skip


# French inversion: "Le vin rouge est-il bon ?", "La bière fait-elle grossir ?".
_INVERSION = re.compile(r"[^\W\d_]-(?:t-)?(?:il|elle|ils|elles|on)\b", re.IGNORECASE)
_FR_QUESTION_WORDS = frozenset(
    {"comment", "pourquoi", "quand", "ou", "combien", "qui", "que", "qu", "quoi", "a", "de"}
)


def is_yes_no(text: str) -> bool:
    """Starts with an auxiliary ("Do …", "Is …", "Est-ce que …", "Peut-on …"), or inverts a
    French subject after a statement's start ("Le vin est-il …"), and asks no definite kind."""
    words = fold_words(text)
    if not words:
        return False
    starts = words[0] in _AUXILIARIES or words[:2] == ["est", "ce"]
    if words[0] == "a" and words[1:2] and words[1] in _FR_QUESTION_WORDS | _OPEN:
        starts = False  # "À quoi sert …", "À qui …": a preposition, not "a-t-il"
    if _OPEN & set(words[:3]):
        return False  # "À quelle heure le support est-il ouvert ?"
    if not starts and _INVERSION.search(text) is not None:
        starts = words[0] not in _FR_QUESTION_WORDS | _OPEN
    # "Is it possible to …", "Is there a way to …", "Est-il possible de …": how, not yes/no.
    asks_how = "possible" in words[:4] or words[1:4] == ["there", "a", "way"]
    return starts and not asks_how and not question_kinds(text)


# A yes/no question about ability ("Can I …?", "Peut-on …?") often means "how": only a
# definite kind conflicts with it.
_ABILITY = frozenset({"can", "could", "peut", "peux", "puis", "pourrait", "pourrais"})


def yes_no_differ(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """A yes/no question against a wh-question: "Is red wine healthy?" / "Which red wine is
    healthy?", "Do women cheat?" / "When do women cheat?" (an ability question, "Can I …?",
    only against a definite kind: "how can I" is its paraphrase)."""
    for asked, other, flip in ((question, stored, False), (stored, question, True)):
        if not is_yes_no(asked):
            continue
        kinds = sorted(question_kinds(other))
        if not kinds and fold_words(asked)[0] not in _ABILITY and _OPEN & set(fold_words(other)):
            kinds = ["which"]  # "How dangerous is X?" stays a paraphrase of "Is X dangerous?"
        if kinds:
            return (kinds, ["yes/no"]) if flip else (["yes/no"], kinds)
    return None


# --- the same number, another unit ---

_UNITS = {
    "kg": "kg", "kgs": "kg", "kilo": "kg", "kilos": "kg", "kilogram": "kg",
    "kilograms": "kg", "kilogramme": "kg", "kilogrammes": "kg",
    "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb", "livre": "lb", "livres": "lb",
    "g": "g", "gram": "g", "grams": "g", "gramme": "g", "grammes": "g",
    "km": "km", "kms": "km", "kilometer": "km", "kilometers": "km", "kilometre": "km",
    "kilometres": "km", "mile": "mile", "miles": "mile",
    "m": "m", "meter": "m", "meters": "m", "metre": "m", "metres": "m",
    "ft": "ft", "feet": "ft", "foot": "ft", "pied": "ft", "pieds": "ft", "cm": "cm",
    "inch": "in", "inches": "in", "ounce": "oz", "ounces": "oz", "oz": "oz", "once": "oz",
    "onces": "oz", "gallon": "gal", "gallons": "gal",
    "l": "l", "liter": "l", "liters": "l", "litre": "l", "litres": "l",
    "second": "s", "seconds": "s", "seconde": "s", "secondes": "s",
    "minute": "min", "minutes": "min", "min": "min", "mins": "min",
    "hour": "h", "hours": "h", "heure": "h", "heures": "h", "h": "h",
    "day": "day", "days": "day", "jour": "day", "jours": "day",
    "week": "week", "weeks": "week", "semaine": "week", "semaines": "week",
    "month": "month", "months": "month", "mois": "month",
    "year": "year", "years": "year", "an": "year", "ans": "year", "annee": "year",
    "annees": "year",
    "gb": "gb", "mb": "mb", "tb": "tb", "go": "gb", "mo": "mb", "to": "tb",
    "dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur",
    "eur": "eur", "rupee": "inr", "rupees": "inr", "rs": "inr", "inr": "inr",
    "percent": "%", "pourcent": "%",
}  # fmt: skip
_GLUED = re.compile(r"^(\d+(?:[.,]\d+)?)([a-z]+)$")


def quantities(text: str) -> dict[str, str]:
    """Number -> unit, for numbers followed by a known unit ("25 kg", "25kg", "3 days")."""
    words = fold_words(text)
    found: dict[str, str] = {}
    for i, word in enumerate(words):
        glued = _GLUED.match(word)
        if glued and glued.group(2) in _UNITS:
            found.setdefault(glued.group(1), _UNITS[glued.group(2)])
        elif word.isdigit() and i + 1 < len(words) and words[i + 1] in _UNITS:
            found.setdefault(word, _UNITS[words[i + 1]])
    return found


# Unit words that are units whatever surrounds them (no number needed): not the one-letter
# ones, nor words that are something else too ("go", "an", "livre" = book, "foot", "second").
_BARE_UNITS = frozenset(_UNITS) - {
    "g", "m", "l", "h", "an", "ans", "to", "go", "mo", "min", "mins", "rs", "livre", "livres",
    "foot", "pied", "once", "second", "seconde", "minute", "eur", "inr", "usd",
}  # fmt: skip


def units_differ(question: str, stored: str) -> dict[str, list[str]] | None:
    """The same number with another unit ("25 kg" / "25 pounds"), or, with no number, a unit
    swapped for another ("cups to grams" / "cups to ounces", "price per gram" / "per kilo",
    issue 36)."""
    uq, us = quantities(question), quantities(stored)
    for number in sorted(uq.keys() & us.keys()):
        if uq[number] != us[number]:
            return {number: [uq[number], us[number]]}
    bare_q, bare_s = _bare_units(question), _bare_units(stored)
    if bare_q - bare_s and bare_s - bare_q:
        return {"-": [",".join(sorted(bare_q - bare_s)), ",".join(sorted(bare_s - bare_q))]}
    return None


def _bare_units(text: str) -> set[str]:
    return {_UNITS[w] for w in fold_words(text) if w in _BARE_UNITS}


# --- an edition, model or version on one side only ---

_NAME_THEN_NUMBER = re.compile(
    r"([^\W\d_][\w-]*)\s+(\d{1,2}|ii|iii|iv|vi|vii|viii|ix)\b", re.IGNORECASE
)
_ROMAN = {"ii": "2", "iii": "3", "iv": "4", "vi": "6", "vii": "7", "viii": "8", "ix": "9"}


def _editions(text: str) -> dict[str, str]:
    """Name -> the number right after it ("Trail 2", "iPhone 7", "War II"): a word written
    with a capital (a name), not a unit or a stop word."""
    found: dict[str, str] = {}
    for match in _NAME_THEN_NUMBER.finditer(text):
        name, number = match.group(1), match.group(2).casefold()
        word = " ".join(fold_words(name))
        if name == name.casefold() or word in STOPWORDS or word in _UNITS:
            continue
        if not number.isdigit() and match.group(2) != match.group(2).upper():
            continue  # "vi" in lower case is a word, not a numeral
        found.setdefault(word, _ROMAN.get(number, number))
    return found


def edition_added(question: str, stored: str) -> tuple[str, str] | None:
    """("trail", "2") when one side numbers a name the other writes bare (and never with
    that number)."""
    for numbered, bare in ((question, stored), (stored, question)):
        bare_words, bare_editions = set(fold_words(bare)), _editions(bare)
        for word, number in sorted(_editions(numbered).items()):
            if word in bare_words and word not in bare_editions and number not in bare_words:
                return word, number
    return None


# --- comparisons of different things ---

_BETWEEN = re.compile(r"\b(?:between|entre)\b(.+)", re.IGNORECASE)
_VERSUS = re.compile(r"\b(?:vs\.?|versus|v/s|or|ou)\b", re.IGNORECASE)
_COMPARE = re.compile(r"\b(?:differences?|difference|diff[ée]rences?|compare|comparer)\b")


def compared(text: str) -> frozenset[str] | None:
    """The content words of what a comparison compares ("difference between A and B",
    "A vs B"), or None when the question compares nothing."""
    first = re.split(r"[?.!]\s", text.strip(), maxsplit=1)[0]  # the first question only
    folded = " ".join(fold_words(first))
    between = _BETWEEN.search(folded) if _COMPARE.search(folded) else None
    if between is not None:
        part = between.group(1)
    elif re.search(r"\b(?:vs|versus)\b", folded):
        part = folded
    else:
        return None
    words = {w for w in part.split() if w not in STOPWORDS and w not in _FUNCTION and len(w) > 1}
    return frozenset(_singular(w) for w in words if not _VERSUS.fullmatch(w))


def compared_differ(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    cq, cs = compared(question), compared(stored)
    if cq is None or cs is None or cq == cs:
        return None
    return sorted(cq - cs), sorted(cs - cq)


def _singular(word: str) -> str:
    """A crude stem: "networks" / "network", "sleeping" / "sleep"."""
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


# --- a cause asked, a definition stored ---

_CAUSE = re.compile(
    r"\b(?:why|pourquoi|what causes|what caused|what is the cause|what are the causes|"
    r"what is the reason|what are the reasons|cause of|causes of|reason for|reasons for|"
    r"qu est ce qui cause|quelle est la cause|quelles sont les causes)\b"
)
_DEFINITION = re.compile(
    r"^(?:what is|what are|what is meant by|qu est ce que|qu est ce qu|c est quoi)"
    r"(?: (?:a|an|the|un|une|le|la|les|l|des))? (.+)$"
)


# Function words: a definition names its thing with none of them.
_FUNCTION = frozenset(
    {
        "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about",
        "and", "or", "is", "are", "be", "do", "does", "i", "you", "we", "my", "your", "it",
        "way", "best", "difference", "between", "reason", "reasons", "cause", "causes",
        "le", "la", "les", "l", "un", "une", "des", "de", "du", "d", "en", "au", "aux",
        "pour", "par", "avec", "et", "ou", "est", "sont", "je", "tu", "nous", "vous",
        "mon", "ma", "mes", "meilleur", "meilleure", "facon", "moyen", "entre",
    }
)  # fmt: skip


def _folded(text: str) -> str:
    return " ".join(fold_words(text)).replace("what s ", "what is ")


def asks_cause(text: str) -> bool:
    return _CAUSE.search(_folded(text)) is not None


def is_definition(text: str) -> bool:
    """ "What is a cardiac sphincter spasm?", "Qu'est-ce qu'un proxy ?": what something is,
    named by content words only (not "what is the best way to …")."""
    match = _DEFINITION.match(_folded(text))
    if match is None:
        return False
    rest = match.group(1).split()
    return 0 < len(rest) <= 5 and not any(word in _FUNCTION for word in rest)


def cause_vs_definition(question: str, stored: str) -> tuple[str, str] | None:
    """One side asks why something happens, the other what it is."""
    if asks_cause(question) and is_definition(stored):
        return "cause", "definition"
    if asks_cause(stored) and is_definition(question):
        return "definition", "cause"
    return None


# The rules of this module, in the order they run, and what each reports when it fails.
FRAME_RULES = ("yesno", "units", "edition", "compared", "cause")
_CHECKS: dict[str, Callable[[str, str], object | None]] = {
    "yesno": yes_no_differ,
    "units": units_differ,
    "edition": edition_added,
    "compared": compared_differ,
    "cause": cause_vs_definition,
}


def frame_failures(
    question: str, stored: str, rules: Collection[str], *, already: Collection[str] = ()
) -> dict[str, object]:
    """The rules of this module (among `rules`) that fail, with what differed. An edition
    that is a code or number swap the check reported `already` is reported once, as that."""
    failed: dict[str, object] = {}
    for name in FRAME_RULES:
        if name == "edition" and {"codes", "numbers"} & set(already):
            continue
        if name in rules and (found := _CHECKS[name](question, stored)) is not None:
            failed[name] = found
    return failed
