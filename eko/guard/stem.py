"""A light stemmer for the verifier's word alignment, English and French (issue 36).

Not a linguistic stemmer: it only has to give an inflected word and its base the same key, so
that "cats" meets "cat", "running" "run", "stopped" "stop", "grande" / "grands" "grand",
"mangent" / "mangé" / "manger" "mang". It runs on words already folded (lower case, no
accents: eko/guard/normalize.py `fold_words`). Over-stemming two different words onto one key
could only let a rare look-alike through; under-stemming costs a paraphrase, so endings are
stripped while at least three letters remain.

Pure string work: a few microseconds a word.
"""

from __future__ import annotations

from functools import lru_cache

# Irregular forms whose rules would miss them (only where the base is different enough that
# no ending rule meets it).
_EN_IRREGULAR = {
    "men": "man", "women": "woman", "children": "child", "people": "person",
    "persons": "person", "mice": "mouse", "feet": "foot", "teeth": "tooth", "geese": "goose",
    "wives": "wife", "knives": "knife", "lives": "life", "leaves": "leaf", "wolves": "wolf",
    "halves": "half", "shelves": "shelf", "thieves": "thief",
    "bought": "buy", "sold": "sell", "made": "make", "went": "go", "gone": "go",
    "ran": "run", "ate": "eat", "eaten": "eat", "wrote": "write", "written": "write",
    "took": "take", "taken": "take", "gave": "give", "given": "give", "saw": "see",
    "seen": "see", "began": "begin", "begun": "begin", "chose": "choose", "chosen": "choose",
    "drove": "drive", "driven": "drive", "flew": "fly", "flown": "fly", "grew": "grow",
    "grown": "grow", "knew": "know", "known": "know", "spoke": "speak", "spoken": "speak",
    "stole": "steal", "stolen": "steal", "won": "win", "lost": "lose", "thought": "think",
    "taught": "teach", "caught": "catch", "brought": "bring", "found": "find",
    "felt": "feel", "kept": "keep", "left": "leave", "meant": "mean", "met": "meet",
    "paid": "pay", "said": "say", "sent": "send", "spent": "spend", "told": "tell",
    "understood": "understand", "slept": "sleep", "fell": "fall", "fallen": "fall",
    "held": "hold", "built": "build", "born": "bear",
}  # fmt: skip
_FR_IRREGULAR = {
    "yeux": "oeil", "cieux": "ciel", "travaux": "travail",
    "fait": "faire", "faite": "faire", "faites": "faire", "fais": "faire", "font": "faire",
    "pris": "prendre", "prise": "prendre", "prend": "prendre", "prennent": "prendre",
    "mis": "mettre", "mise": "mettre", "met": "mettre", "mettent": "mettre",
    "vu": "voir", "vue": "voir", "vois": "voir", "voit": "voir", "voient": "voir",
    "su": "savoir", "sais": "savoir", "sait": "savoir", "savent": "savoir",
    "pu": "pouvoir", "peut": "pouvoir", "peux": "pouvoir", "peuvent": "pouvoir",
    "dois": "devoir", "doit": "devoir", "doivent": "devoir",
    "veut": "vouloir", "veux": "vouloir", "veulent": "vouloir", "voulu": "vouloir",
    "va": "aller", "vas": "aller", "vont": "aller", "allez": "aller", "allons": "aller",
    "ecrit": "ecrire", "ecrite": "ecrire", "ecrits": "ecrire", "ecrivent": "ecrire",
    "nee": "naitre", "nes": "naitre", "mort": "mourir", "morte": "mourir",
    "meurt": "mourir", "vecu": "vivre", "vit": "vivre", "vivent": "vivre",
    "bu": "boire", "boit": "boire", "boivent": "boire",
}  # fmt: skip

_EN_KEEP = frozenset({"news", "series", "species", "physics", "mathematics", "economics"})
_VOWELS = frozenset("aeiouy")
# French endings, longest first: verb forms, participles, agreement, plurals.
_FR_ENDINGS = (
    "issaient", "eraient", "issions", "issent", "issait", "issais", "issez", "iront",
    "irait", "ira", "issante", "issants", "issant", "assent", "erions",
    "eront", "erait", "erais", "eriez", "aient", "ement", "euses", "ives",
    "erez", "eras", "erai", "eurs", "trices", "trice", "iez", "ions", "ent", "ons", "ait",
    "ais", "ant", "ees", "era", "euse", "ive", "aux", "eux", "eur", "ues", "ez", "er", "ir",
    "re", "ee", "es", "is", "it", "ie", "ue", "us", "e", "s", "x", "i", "u",
)  # fmt: skip
_FR_REPLACE = {
    "euse": "eu", "euses": "eu", "eux": "eu", "eur": "eu", "eurs": "eu", "trice": "teu",
    "trices": "teu", "ive": "if", "ives": "if", "aux": "al",
}  # fmt: skip
_MIN_STEM = 3


def stem(word: str, language: str = "en") -> str:
    """The key an inflected `word` (folded) shares with its base, in `language` ("fr" or
    anything else for English)."""
    return _stem(word, language == "fr")


@lru_cache(maxsize=8192)
def _stem(word: str, french: bool) -> str:
    irregular = _FR_IRREGULAR if french else _EN_IRREGULAR
    if word in irregular:
        return _stem(irregular[word], french)
    if not word.isalpha() or len(word) <= _MIN_STEM:
        return word
    return _french(word) if french else _english(word)


def _english(word: str) -> str:
    if word in _EN_KEEP:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > 4:
        return word[:-3] + "y"
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) > len(ending) + 1:
            base = word[: -len(ending)]
            if not _VOWELS & set(base) or word.endswith("eed"):
                continue  # "sing", "red", "bed", "need"
            if len(base) < _MIN_STEM:
                return base + "e"  # used -> use, using -> use
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                return base[:-1]  # running -> run, stopped -> stop
            if _short_cvc(base):
                return base + "e"  # making -> make, writing -> write
            return base
    if word.endswith(("ation", "ate")) and len(word) > 5:
        return word[: -3 if word.endswith("ate") else -5] + "at"  # activation / activate
    if word.endswith("ly") and len(word) > 5:
        return word[:-2]  # quickly -> quick
    return word


def _short_cvc(base: str) -> bool:
    """A short base ending consonant-vowel-consonant lost its final e: "mak", "writ"."""
    if len(base) > 4 or base[-1] in _VOWELS or base[-1] in "wx":
        return False
    return base[-2] in _VOWELS and base[-3] not in _VOWELS


def _drop_e(word: str) -> str:
    """French: "mange" / "mangent" / "manger" share "mang"."""
    return word[:-1] if word.endswith("e") and len(word) > _MIN_STEM else word


def _french(word: str) -> str:
    verb_forms = ("aux", "eux", "ons", "ais", "ez")
    if word.endswith(("s", "x")) and not word.endswith(verb_forms) and len(word) > 4:
        word = word[:-1]  # the plural first: heures / heure
    for ending in _FR_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= _MIN_STEM:
            base = word[: -len(ending)] + _FR_REPLACE.get(ending, "")
            # grande -> grand, nouvelle -> nouvel, ancienne -> ancien
            if base.endswith(("ell", "enn", "onn", "ett")) and ending in ("e", "es"):
                base = base[:-1]
            return _drop_e(base)  # mangeons -> mange -> mang
    return word
