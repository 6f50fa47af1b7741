"""Word-level rules of the verifier: the kind of question, opposite words, and counts.

- **kind**: "Who is X?" is not "Where is X?", "Quand …" is not "Combien …": both ask a
  definite kind (who, where, when, why, how many) and none in common. Open kinds (what,
  which, how, yes/no) mix freely: paraphrases swap them all the time (measured on QQP), except
  why / how, which + noun / how, and (issue 36) a manner against a decision ("How do I quit my
  job?" / "Should I quit my job?"), an outcome ("… / What do I gain from quitting my job?"),
  a *when* or *who* ("When do I …?") or a definition ("What is …?"): rules_manner.py.
- **opposites**: one side says "increase", "summer", "avant", "ajouter" and the other its
  opposite ("reduce", "winter", "après", "retirer"): the same words around them, the
  opposite question.
- **counts**: "un œuf" / "6 œufs", "a day" / "3 days": the same thing counted differently,
  which the number rule (only swaps fail) lets through.
"""

from __future__ import annotations

import re
import unicodedata

from eko.guard.normalize import fold_words
from eko.guard.rules_align import with_digits
from eko.guard.rules_manner import definition_against_manner, manner_against_kind

# --- the kind of question ---

_KINDS = {
    "who": "who", "whom": "who", "whose": "who", "qui": "who",
    "where": "where", "ou": "where",
    "when": "when", "quand": "when",
    "why": "why", "pourquoi": "why",
    "combien": "count",
    "how": "how", "comment": "how",
    "what": "what", "which": "what", "que": "what", "quel": "what", "quelle": "what",
    "quels": "what", "quelles": "what", "quoi": "what", "qu": "what",
}  # fmt: skip
_COUNT_AFTER_HOW = frozenset({"many", "much", "long", "old", "often", "far", "big"})
# Kinds that change the answer whatever the rest says.
_DEFINITE = frozenset({"who", "where", "when", "why", "count"})


def question_kinds(text: str) -> frozenset[str]:
    """The definite kinds a question asks (who / where / when / why / count), from every
    question word in it: "When and by whom was …" asks both when and who."""
    raw = unicodedata.normalize("NFKC", text).casefold()
    words = fold_words(text)
    kinds = set()
    for i, word in enumerate(words):
        if word == "ou" and "où" not in raw:
            continue  # "ou" (or) without its accent is not "où" (where)
        if word == "how" and i + 1 < len(words) and words[i + 1] in _COUNT_AFTER_HOW:
            kinds.add("count")
        elif word in _KINDS:
            kinds.add(_KINDS[word])
    return frozenset(kinds & _DEFINITE)


def asks_how(text: str) -> bool:
    """A manner or degree question: "How do cats purr?", "How salty is …", "Comment …"; not
    "how many / how long" (a count) nor "how come" (why)."""
    words = fold_words(text)
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if word == "comment" or (word == "how" and after not in _COUNT_AFTER_HOW | {"come"}):
            return True
    return False


def kinds_differ(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """Both ask a definite kind, and no kind in common ("Who is X?" / "Where is X?"), or one
    asks why and the other how ("Why do cats purr?" / "How do cats purr?": a cause is not a
    mechanism). Other open kinds (what, which, how) never conflict with each other:
    paraphrases swap them all the time."""
    kq, ks = question_kinds(question), question_kinds(stored)
    if kq and ks and not kq & ks:
        return sorted(kq), sorted(ks)
    if "why" in kq and "why" not in ks and asks_how(stored):
        return ["why"], ["how"]
    if "why" in ks and "why" not in kq and asks_how(question):
        return ["how"], ["why"]
    # A choice among things against a manner: "Which payment gateway should I use?" / "How
    # do I use a payment gateway?".
    if asks_which(question) and not asks_which(stored) and asks_how(stored):
        return ["which"], ["how"]
    if asks_which(stored) and not asks_which(question) and asks_how(question):
        return ["how"], ["which"]
    # A manner against a decision or an outcome (issue 36): "How do I quit my job?" / "Should I
    # quit my job?", "Comment apprendre à coder ?" / "À quoi sert d'apprendre à coder ?".
    for asked, other, flip in ((question, stored, False), (stored, question, True)):
        if not asks_how(asked) or asks_how(other):
            continue
        other_kind = "decision" if asks_decision(other) else None
        if other_kind is None and outcome_marks(other) - outcome_marks(asked):
            other_kind = "outcome"
        if other_kind is not None:
            return ([other_kind], ["how"]) if flip else (["how"], [other_kind])
    # A manner against a when / who, or against a definition (rules_manner.py).
    return manner_against_kind(question, stored) or definition_against_manner(question, stored)


# --- a decision, an outcome: what a manner question is not ---

# A question that asks whether one should: "Should I …?", "Must I …?", "Dois-je …?", "Faut-il
# …?", "Devrais-je …?", "Est-ce que je dois …?". Not "Can I …?" (ability often means how) nor
# "Is/Does/Will …?": on QQP dev these against "how" were paraphrases ("Will terrorism ever be
# stopped?" / "How can terrorism be stopped?"), the decision ones were not.
_DECISION = frozenset(
    {
        "should", "shall", "must", "ought",
        "dois", "doit", "devons", "devez", "doivent", "devrais", "devrait", "devrions",
        "devriez", "devraient", "faut", "vaut",
    }
)  # fmt: skip
# "Is it worth …?", "Is it a good idea to …?", "Do I have to …?", "Est-ce une bonne idée de …?".
_DECISION_PHRASE = re.compile(
    r"^(?:(?:is|would|will|was) it (?:really )?(?:worth|a good idea|wise|advisable)"
    r"|(?:do|does|did) (?:i|you|we|one|they) (?:really )?(?:have|need) to"
    r"|est ce (?:que c est |que ce serait |qu il est )?une bonne idee)\b"
)


def asks_decision(text: str) -> bool:
    """Asks whether one should do something, not how to: starts with a decision modal
    ("Should I …", "Faut-il …", "Est-ce que je dois …") or phrase ("Is it worth …")."""
    words = fold_words(text)
    if not words:
        return False
    if words[:2] == ["est", "ce"]:  # "Est-ce que je dois …", "Est-ce qu'il faut …"
        return bool(_DECISION & set(words[2:6])) or bool(_DECISION_PHRASE.match(" ".join(words)))
    return words[0] in _DECISION or bool(_DECISION_PHRASE.match(" ".join(words)))


# What a question asks for when it asks the result, benefit or purpose of something: "What do
# I gain from …", "What can I get by …", "What happens if …", "What does X do for you", "the
# benefits of", "À quoi sert …", "Que gagne-t-on à …", "Qu'apporte …", "Que se passe-t-il si
# …". A mark on the other side too ("How can I benefit from …") is no difference.
_OUTCOMES = {
    "get": r"\bwhat(?: \w+){0,2} (?:get|gain|achieve)\b",
    "happen": r"\bwhat(?: \w+)? happens?\b",
    "do for": r"\bwhat (?:do|does|did|can|could|will|would)(?: \w+){1,4} do for "
    r"(?:you|me|us|one|them|him|her|my|your|our|their)\b",
    "good for": r"\bwhat\b.* good for$",  # "What is keeping a diary good for?"
    "benefit": r"\b(?:benefits?|advantages?|pros)\b",
    "purpose": r"\b(?:purpose|the point (?:of|in)|(?:the|any) use of|used for)\b",
    "effect": r"\b(?:effects?|results?|consequences?|outcomes?)\b",
    "sert": r"\ba quoi(?: \w+)? (?:sert|servent|servir|bon)\b",
    "gagne": r"\b(?:que|qu|quoi)(?: \w+){0,4} (?:gagne|gagnent|apporte|apportent|rapporte)\b",
    "se passe": r"\b(?:que|qu)(?: \w+){0,3} se passe\b",
    "bienfait": r"\b(?:bienfaits?|avantages?|interet|utilite)\b",
    "effet": r"\b(?:effets?|consequences?|resultats?)\b",
}
_OUTCOME = {name: re.compile(pattern) for name, pattern in _OUTCOMES.items()}


def outcome_marks(text: str) -> frozenset[str]:
    """The outcome marks of a question (names of _OUTCOMES): none for "How do I …"."""
    joined = " ".join(fold_words(text))
    return frozenset(name for name, pattern in _OUTCOME.items() if pattern.search(joined))


_WHICH = frozenset({"which", "quel", "quelle", "quels", "quelles"})
# After "which" / "quel", a verb or a pronoun: "Which is the best way …" asks no choice of a
# thing ("Quelle est la meilleure façon de …" is a "how").
_NOT_A_CHOICE = frozenset(
    {"is", "are", "was", "were", "one", "ones", "of", "do", "does", "est", "sont", "etait"}
)


def asks_which(text: str) -> bool:
    """Asks to choose a thing: "which" or "quel" right before a noun."""
    words = fold_words(text)
    return any(
        word in _WHICH and i + 1 < len(words) and words[i + 1] not in _NOT_A_CHOICE
        for i, word in enumerate(words)
    )


# --- opposite words ---

_OPPOSITES_TEXT = """
increase|increasing|increased|raise|gain|enlarge decrease|decreasing|reduce|reduced|lower|lose
add|adding|added remove|removing|removed|delete|deleting
before after
buy|buying sell|selling
open|opening close|closing
enable|enabling disable|disabling
install|installing uninstall|uninstalling
import|importing export|exporting
upload|uploading download|downloading
man|men|male|boy|boys|husband|father|son woman|women|female|girl|girls|wife|mother|daughter
brother sister
summer winter
hot cold
best worst
advantages|advantage|benefits|benefit|pros disadvantages|disadvantage|risks|dangers|cons
love hate
first last
minimum|min maximum|max
cheap|cheapest expensive
morning evening|night
question|questions answer|answers
encrypt decrypt
send|sending receive|receiving
more|most less|least|fewer
higher|highest|bigger|biggest|larger|largest lower|lowest|smaller|smallest
taller|tallest shorter|shortest
older|oldest younger|youngest
rise|rises|rising|sunrise set|sets|setting|sunset
win|wins|winning|won lose|loses|losing|lost
push|pushing pull|pulling
north south
east west
start|starting|begin|beginning end|ending|finish|finishing
augmenter|augmente|augmentation diminuer|diminue|reduire|baisser
ajouter|ajoute|ajout retirer|retire|supprimer|supprime|enlever
avant apres
acheter|achat vendre|vente
ouvrir|ouvert|ouverte fermer|ferme|fermee
activer|active desactiver|desactive
installer desinstaller
importer exporter
homme|hommes|garcon|garcons|mari|pere|fils|frere femme|femmes|fille|filles|epouse|mere|soeur
hiver printemps
chaud froid
meilleur|meilleure|meilleurs pire|pires
avantages|avantage|bienfaits|bienfait inconvenients|inconvenient|dangers|danger|risques
aimer|aime detester|deteste
premier|premiere dernier|derniere
minimum maximum
envoyer|envoi recevoir|reception
monter descendre
allumer eteindre
entrer sortir
plus moins
grand|grande|grands|grandes petit|petite|petits|petites
jeune|jeunes vieux|vieille|vieilles
lever|leve couche|coucher
gagner|gagne|gagnant perdre|perdu|perdant
pousser tirer
nord sud
debut|commencer|commence fin|finir|finit|terminer|termine
hausse baisse
same|similar|identical different|differente|differents|differentes
meme|memes|pareil|pareille|identique|identiques different|differente|differents|differentes
legal|legale|legally illegal|illegale|illegally
possible impossible
pass|passed|passing|succeed|success fail|failed|failing|failure
reussir|reussis|reussi|reussite rate|rater|echouer|echoue|echec
positive|positif negative|negatif
easy|easier|easiest|facile|faciles hard|harder|hardest|difficult|difficile|difficiles
fast|faster|fastest|rapide|rapides slow|slower|slowest|lent|lente|lents|lentes
good|bon|bonne|bons|bonnes bad|mauvais|mauvaise
early|earlier|tot late|later|tard
public|publique private|prive|privee
online offline
rich|riche|riches poor|pauvre|pauvres
true|vrai|vraie false|faux|fausse
happy|heureux|heureuse sad|unhappy|triste|malheureux|malheureuse
full|plein|pleine empty|vide
agree disagree
accept|accepter reject|refuser
include exclude
input output
inside outside
"""


def _opposite_pairs() -> list[tuple[frozenset[str], frozenset[str]]]:
    pairs = []
    for line in _OPPOSITES_TEXT.strip().splitlines():
        left, right = line.split()
        pairs.append((frozenset(left.split("|")), frozenset(right.split("|"))))
    return pairs


_OPPOSITES = _opposite_pairs()


# "the same as", "different from", "similar to", "identique à": a comparison of two things, which
# either word asks ("Is X the same as Y?" / "How are X and Y different?", QQP dev).
_COMPARED = frozenset(
    {
        "same", "similar", "identical", "different", "meme", "memes", "pareil", "pareille",
        "identique", "identiques", "differente", "differents", "differentes",
    }
)  # fmt: skip
_COMPARED_NEXT = frozenset(
    {"as", "to", "from", "than", "que", "de", "du", "des", "d", "a", "au", "aux"}
)


def _opposable(text: str) -> set[str]:
    words = fold_words(text)
    return {
        word
        for i, word in enumerate(words)
        if word not in _COMPARED or i + 1 >= len(words) or words[i + 1] not in _COMPARED_NEXT
    }


def opposites(question: str, stored: str) -> list[str] | None:
    """A word on one side only whose opposite is on the other side only."""
    wq, ws = _opposable(question), _opposable(stored)
    only_q, only_s = wq - ws, ws - wq
    for left, right in _OPPOSITES:
        for a, b in ((left, right), (right, left)):
            found_q, found_s = only_q & a, only_s & b
            if found_q and found_s and not (wq & b) and not (ws & a):
                return [min(found_q), min(found_s)]
    return None


# --- counts ---

_ARTICLES_ONE = frozenset({"a", "an", "one", "un", "une", "per", "par"})


def counts(text: str) -> dict[str, str]:
    """Nouns with their count: "6 œufs" -> {oeuf: 6}, "un œuf" / "a day" -> {oeuf: 1, day: 1}."""
    words = [w[1:] if w.startswith("#") else w for w in with_digits(fold_words(text))]
    found: dict[str, str] = {}
    for i, word in enumerate(words[:-1]):
        noun = _singular(words[i + 1])
        if word.isdigit():
            found.setdefault(noun, word.lstrip("0") or "0")
        elif word in _ARTICLES_ONE and len(noun) > 2:
            found.setdefault(noun, "1")
    return found


def counts_differ(question: str, stored: str) -> dict[str, list[str]] | None:
    cq, cs = counts(question), counts(stored)
    for noun in sorted(cq.keys() & cs.keys()):
        # Only "one" against a written number: two written numbers are the number rule's.
        if cq[noun] != cs[noun] and "1" in (cq[noun], cs[noun]):
            return {noun: [cq[noun], cs[noun]]}
    return None


def _singular(word: str) -> str:
    if word.endswith(("s", "x")) and len(word) > 3:
        return word[:-1]
    return word
