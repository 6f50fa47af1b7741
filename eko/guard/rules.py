"""String rules of the verifier: what a cosine cannot see and a cached answer must not cross.

Three rules, pure string work (well under a millisecond), English and French, measured on QQP pairs
(docs/guard.md):

- **deictic**: a question pointing at something that is not in its text ("What does this
  mean?", "Is that true?", "Que veut dire cette phrase ?", "Comment ça marche ?") depends on
  what the asker is looking at; the same words asked by someone else point elsewhere. Never
  served, never a candidate. Not deictic: time phrases ("this year's budget", "ce soir", "cette
  semaine"), generic "those who …", relative "ce que / ce qui", a forward reference ("is this
  true: …"), and a demonstrative that comes after its referent (a later sentence or clause).
  A forward reference with nothing after it is deictic (issue 36): "What should I do in the
  following situation?", "the code below", "la phrase suivante", "le texte ci-dessous".
- **codes**: an alphanumeric code or version swapped for another ("iPhone 6" / "iPhone 6s",
  "Windows 10" / "Windows XP", "4G" / "5G", "World War III" == "world war 3").
- **order**: the same names in another order, when the order carries meaning ("Didi beat
  Uber" / "Uber beat Didi", "install Mac on Windows" / "Windows on Mac"). "A vs B", "A or B",
  "A et B", "difference between A and B" are symmetric and pass.

The false-hit check (eko/guard/check.py) runs these after its negation/number/name rules.
"""

from __future__ import annotations

import re
import unicodedata
from itertools import combinations

from eko.guard.normalize import STOPWORDS, fold_words
from eko.text import strip_accents


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- deictic questions ---

# Nouns after "this/these" (EN) or "ce/cet/cette/ces" (FR) that make a time or generic phrase,
# not a pointer: "this year's", "these days", "ce soir", "cette semaine".
_EN_TIME = _words(
    """year years month week weekend morning afternoon evening night tonight today summer
    winter spring autumn fall season semester term quarter century decade time times moment
    day days era generation world life much many far long late early"""
)
_FR_TIME = _words(
    """soir matin midi apres-midi nuit jour jours journee semaine week-end weekend mois annee
    annees an ete hiver printemps automne saison trimestre semestre siecle temps moment fois
    derniers dernieres epoque"""
)
# "that" is mostly a conjunction or a relative pronoun: it points only at the end of a
# question ("Why did he do that?") or before one of these nouns.
_THAT_NOUNS = _words(
    """guy girl man woman person thing stuff movie film song video picture photo image book
    place word words phrase sentence text message email link site page app code error problem
    question answer quote story joke"""
)
# Words before a pointing "that": a verb or a preposition ("do that", "of that video"); after
# a noun, "that" is a relative pronoun ("books that people read").
_THAT_BEFORE = _words(
    """do does did done doing is was be mean means meant say said about of like with on in for
    by to see saw try fix use buy read watch explain know make get called call"""
)
# A forward reference: the question announces what follows ("the following sequence").
_FORWARD = frozenset({"following", "below", "suivant", "suivante", "suivants", "ci-dessous"})
# After "those"/"these" in the same clause: a generic group, not a pointer ("those who …").
_RELATIVES = frozenset({"who", "whom", "whose", "which", "that", "qui", "que", "dont"})
_FR_PRONOUNS = frozenset({"ça", "ca", "cela", "ceci"})
_FR_DETERMINERS = frozenset({"ce", "cet", "cette", "ces"})
_FR_LOCATIVE = re.compile(r"^(?:celui|celle|ceux|celles)-(?:ci|là|la)$")
# "ce" that is not a determiner: "est-ce", "qu'est-ce que", "ce que", "ce qui", "ce dont".
_FR_NOT_DETERMINER_NEXT = frozenset(
    {"que", "qu", "qui", "dont", "sont", "soit", "serait", "sera", "fut", "n", "ne", "faisant"}
)
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_CLAUSE_END = re.compile(r"[.?!;:,]\s|[.?!;:,]$|\n")
_RAW_TOKEN = re.compile(r"[^\W\d_][\w'’-]*|\d+|[\"'“”«»:]")
# Words before a clause boundary for what follows to count as referring back to it.
_ANTECEDENT_WORDS = 3
# Content words (not stopwords) at most, for a bare "it" to point at something unseen.
_IT_MAX_CONTENT = 1
_IT_MAX_WORDS = 8
# Words before a demonstrative from which it refers back to them ("… a pilsner style beer and
# how does this compare …").
_FAR_WORDS = 10
_QUOTES = frozenset("\"'“”«»")


def is_deictic(text: str) -> bool:
    """Whether the question points at something outside its own text (English, French)."""
    sentences = [s for s in _SENTENCE.split(text) if len(fold_words(s)) >= _ANTECEDENT_WORDS]
    if len(sentences) <= 1 and _forward_to_nothing(text):
        return True
    if len(sentences) > 1 or _FORWARD & set(fold_words(text)):
        # Several sentences: the referent may be in another one ("How can this code be
        # explained? int k = 34; …"), or the question is about the asker's own story.
        return False
    earlier: set[str] = set()
    for clause_index, clause in enumerate(_clauses(text)):
        if clause_index > 0 and _antecedent_before(text, clause):
            break  # a later clause may refer back to what came before
        if _clause_is_deictic(clause, earlier):
            return True
        earlier.update(fold_words(clause))
    return _bare_it(text)


# Nouns that name a piece of text, a figure or a case the asker would have to show: "the
# following situation", "the code below", "la phrase suivante", "le texte ci-dessous".
_SHOWN = _words(
    """situation situations sentence sentences phrase phrases statement statements question
    questions equation equations code program programs snippet text passage paragraph poem
    problem problems expression query function algorithm argument scenario error message
    example list table graph chart picture image diagram link article riddle puzzle case
    word words line lines output excerpt quote story data sequence series figure essay letter
    email description conditions information options answer answers exercise document
    affirmation equation programme texte paragraphe poeme probleme requete fonction
    algorithme erreur exemple liste tableau graphique schema lien enigme cas mot mots lignes
    extrait citation histoire donnees suite figure lettre exercice enonce script commande
    formule"""
)
# Words before "below" / "above" that announce text placed there: "given below", "the above".
_PLACED = _words("mentioned given shown listed stated written described quoted attached")
_FR_FOLLOWING = frozenset({"suivant", "suivante", "suivants", "suivantes"})
# Words after "the following <noun>" for the text to still be missing: "… situation?" yes,
# "Which of the following is a mammal, a whale or a shark?" no (the options are given).
_FORWARD_TAIL = 4


def _forward_to_nothing(text: str) -> bool:
    """A forward reference ("the following", "below", "suivant", "ci-dessous") with nothing
    given after it: no colon, no second line, at most a few words after "the following"."""
    if ":" in text or "\n" in text.strip():
        return False
    words = fold_words(text)
    for i, word in enumerate(words):
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        if word == "following" and (
            after in _SHOWN
            or (before == "the" and after not in _EN_TIME and len(words) - i - 1 <= _FORWARD_TAIL)
        ):
            return True
        if word in ("below", "above") and (
            before in _SHOWN | _PLACED or (word == "above" and before == "the")
        ):
            return True
        if word in ("dessous", "dessus") and before == "ci":
            return True
        if word in _FR_FOLLOWING and before in _SHOWN and len(words) - i - 1 <= 2:
            return True
    return False


def _clauses(text: str) -> list[str]:
    parts, start = [], 0
    for match in _CLAUSE_END.finditer(text):
        if match.group(0).startswith(":"):
            # "Is this true: the earth is flat?" — what follows a colon is the referent.
            parts.append(text[start : match.start()] + " :")
        else:
            parts.append(text[start : match.start()])
        start = match.end()
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _antecedent_before(text: str, clause: str) -> bool:
    before = text[: text.find(clause)]
    return len(fold_words(before)) >= _ANTECEDENT_WORDS


def _clause_is_deictic(clause: str, earlier: set[str]) -> bool:
    tokens = [_fold(t) for t in _RAW_TOKEN.findall(unicodedata.normalize("NFKC", clause))]
    for i, token in enumerate(tokens):
        if i + 1 < len(tokens) and tokens[i + 1] in earlier | set(tokens[:i]):
            continue  # "a new word … that word": the noun was named before
        if len(earlier) + i >= _FAR_WORDS:
            break  # this far into a question, a demonstrative refers back
        before = tokens[i - 1] if i else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else ""
        rest = tokens[i + 1 :]
        if before in _QUOTES or after in _QUOTES:
            continue  # the word itself is quoted: "the 'this' keyword"
        if ":" in rest or any(q in rest for q in _QUOTES):
            continue  # a forward reference: "what does this mean: «…»"
        if _points(token, before, after, rest):
            return True
    return False


def _points(token: str, before: str, after: str, rest: list[str]) -> bool:
    head = after.split("'")[0]  # "year's" -> "year"
    if token in ("this", "these"):
        if head in _EN_TIME:
            return False
        return not (token == "these" and _RELATIVES & set(rest))
    if token == "those":
        return not _RELATIVES & set(rest) and head not in _EN_TIME and head != "of"
    if token == "that":
        if before in {"is", "was"} and len(rest) <= 1:
            return True  # "Is that true?", "What is that?"
        return before in _THAT_BEFORE and (not rest or head in _THAT_NOUNS)
    if token in _FR_PRONOUNS:
        return token != "ca" or not after.isupper()
    if token in _FR_DETERMINERS:
        if token == "ce" and (before == "est" or head in _FR_NOT_DETERMINER_NEXT or not after):
            return False
        return bool(after) and _strip_locative(head) not in _FR_TIME
    return bool(_FR_LOCATIVE.match(token))


def _strip_locative(word: str) -> str:
    return re.sub(r"-(?:ci|là|la)$", "", word)


def _fold(token: str) -> str:
    if token.isupper() and len(token) > 1 and token != "ÇA":
        return token  # an acronym stays as written: "CA" is not "ça"
    lowered = token.casefold().replace("’", "'")
    if lowered in ("ça", "là"):
        return lowered
    return strip_accents(lowered).replace("celui-la", "celui-là").replace("celle-la", "celle-là")


def _bare_it(text: str) -> bool:
    """ "How do I fix it?", "Is it safe?": "it" with nothing in the text it could stand for."""
    words = fold_words(text)
    if "it" not in words or len(words) > _IT_MAX_WORDS:
        return False
    content = [w for w in words if w != "it" and len(w) > 2 and w not in STOPWORDS]
    return len(content) <= _IT_MAX_CONTENT


# --- codes and versions ---

_ROMAN = {"ii": "2", "iii": "3", "iv": "4", "vi": "6", "vii": "7", "viii": "8", "ix": "9"}
_CODE_TOKEN = re.compile(r"[^\W_](?:[\w.]*[^\W_])?")
_HEAD_SKIP = _words(
    """in on at of for to by from and or the a an top best than over under about around since
    until between en de du des le la les et ou au aux sur pour par dans avant apres vers"""
)


def codes(text: str) -> frozenset[str]:
    """Codes and versions, folded: "iPhone 6" -> iphone6, "COVID-19" -> covid19, "4G" -> 4g,
    "Windows XP" -> windowsxp, "World War III" -> war3. Ordinals and decades ("3rd", "20s")
    are numbers, and the number rule of the check covers them."""
    text = re.sub(r"(?<=[^\W\d_])-(?=\d)|(?<=\d)-(?=\d+\b)", "", text)  # COVID-19, F-16
    text = re.sub(r"(\d)(?:'s|st|nd|rd|th|e|er|ème|eme)\b", r"\1", text)  # 20's, 3rd, 2e
    tokens = _CODE_TOKEN.findall(unicodedata.normalize("NFKC", text))
    found: set[str] = set()
    for i, token in enumerate(tokens):
        flat = token.replace(".", "").casefold()
        has_digit = any(c.isdigit() for c in flat)
        if has_digit and any(c.isalpha() for c in flat):
            head = tokens[i - 1] if i else ""
            if flat[0].isdigit() and head.isalpha() and not head.islower():
                flat = head.casefold() + flat  # "iPhone 6s" == "iPhone6s"
            found.add(flat)
            continue
        version = _version(token)
        if version is None or i == 0:
            continue
        head = tokens[i - 1]
        # A version follows a name: "Python 3", "Windows XP"; not "at least 1", "your 20".
        if head.casefold() in _HEAD_SKIP or head.islower() or not head.isalpha():
            continue
        found.add(head.casefold() + version)
    return frozenset(found)


def _version(token: str) -> str | None:
    """A version after a name: a number ("10", "2.7"), a roman numeral, or a short acronym."""
    if re.fullmatch(r"\d+(?:\.\d+)?", token):
        return token if len(token) < 4 else None  # "in 2016" is a year, not a version
    if token in ("II", "III", "IV", "VI", "VII", "VIII", "IX"):
        return _ROMAN[token.casefold()]
    if re.fullmatch(r"[A-Z]{2,3}", token) and token not in ("OR", "AND", "VS", "ET", "OU"):
        return token.casefold()
    return None


def codes_swapped(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """Codes on each side that the other lacks, when both sides have some (a swap)."""
    cq, cs = codes(question), codes(stored)
    only_q, only_s = sorted(cq - cs), sorted(cs - cq)
    return (only_q, only_s) if only_q and only_s else None


# --- name order ---

# Words between two names that make their order irrelevant ("A vs B", "A et B").
_SYMMETRIC_LINKS = frozenset({"and", "or", "vs", "versus", "v", "et", "ou", "with", "avec"})
# A question about both at once: "difference between A and B", "compare A to B".
_SYMMETRIC_MARKERS = _words(
    """difference differences between compare compared comparison similar similarities same
    versus vs difference differences entre comparer compare comparaison comparatif"""
)


_ARTICLES = frozenset({"the", "a", "an", "le", "la", "les", "l", "un", "une", "des", "du", "d"})


def order_swapped(question: str, stored: str) -> list[str] | None:
    """The first two names both questions mention that appear in opposite orders with the
    same link between them ("Didi beat Uber" / "Uber beat Didi"), unless symmetric."""
    words_q, words_s = fold_words(question), fold_words(stored)
    shared_names = frozenset(
        n for n in _order_names(question) | _order_names(stored) if n in words_q and n in words_s
    )
    if len(shared_names) < 2:
        return None
    if _SYMMETRIC_MARKERS & (set(words_q) | set(words_s)):
        return None
    pos_q = {n: _position(words_q, n) for n in shared_names}
    pos_s = {n: _position(words_s, n) for n in shared_names}
    present = sorted(n for n in shared_names if pos_q[n] is not None and pos_s[n] is not None)
    for a, b in combinations(present, 2):
        qa, qb, sa, sb = pos_q[a], pos_q[b], pos_s[a], pos_s[b]
        assert qa is not None and qb is not None and sa is not None and sb is not None
        if qa == qb or sa == sb or (qa < qb) == (sa < sb):
            continue
        between_q = words_q[min(qa, qb) + 1 : max(qa, qb)]
        between_s = words_s[min(sa, sb) + 1 : max(sa, sb)]
        symmetric = _SYMMETRIC_LINKS | shared_names  # a list of names: "A, B, C" / "C, B, A"
        if set(between_q) <= symmetric and set(between_s) <= symmetric:
            continue
        link_q, link_s = _link(between_q, shared_names), _link(between_s, shared_names)
        if not between_q or not between_s or link_q != link_s:
            # Reworded around the names ("Is Modi changing India?" / "Is India changing
            # under Modi?"): paraphrases do that; only the same link reversed is a swap.
            continue
        return [a, b] if qa < qb else [b, a]
    return None


_NAME_TOKEN = re.compile(r"[^\W\d_][\w-]*")


def _order_names(text: str) -> frozenset[str]:
    """Capitalized words that do not start a sentence, and acronyms, folded ("l'OM" -> om).
    Unlike the check's extractor, a short question may be mostly names ("Did Didi beat Uber?")."""
    found: set[str] = set()
    tokens = list(_NAME_TOKEN.finditer(text.replace("’", "'")))
    if sum(t.group(0)[0].isupper() for t in tokens) == len(tokens):
        return frozenset()  # Title Case Throughout (or all capitals): case marks nothing
    for match in tokens:
        token = match.group(0)
        starts = not text[: match.start()].strip() or text[: match.start()].rstrip()[-1] in ".?!"
        acronym = sum(c.isupper() for c in token) >= 2
        if token[0].isupper() and (acronym or not starts) and token not in ("I", "I'm"):
            found.update(fold_words(token))
    return frozenset(found)


def _link(between: list[str], names: frozenset[str]) -> frozenset[str]:
    """The words that link two names, without articles and the other names: "on", "a battu",
    "beat", "a better choice than" (in "Hillary Clinton a better choice than Donald Trump")."""
    return frozenset(w for w in between if w not in _ARTICLES and w not in names)


def _position(words: list[str], name: str) -> int | None:
    for i, word in enumerate(words):
        if word == name or word == name + "s" or (name.endswith("s") and word == name[:-1]):
            return i
    return None
