"""The verb's time and mood, a rule of the verifier (issue 36, family `tense_mood`).

"Did Apple release a new iPhone?" is not "Will Apple release …?", "Does Canada support the
deal?" is not "Should Canada support …?", "Have you lived in a tiny house?" is not "Would you
live in one?": the words are the same and the embedder scores them as one question, but a
past fact, a prediction, an opinion and a wish are four different answers.

A question's mood is read from its main clause's auxiliary: English from the first auxiliary
of its first words ("How long has …", "Should …"), French from the first marker anywhere (its
verb moves: "Le Canada devrait-il …", "Est-ce que Netflix a annulé …"). Present is the
default; a question with no marker says nothing. Moods that can share an answer pass: present
and future ("What happens / will happen if …"), present and past ("How did you / do I lose
weight?"), a wish and anything but the past ("Would it be possible / Is it possible …").
Ability ("Can men wear makeup?") passes with all. Advice against a present fact fails only when
neither side asks about the asker or anyone in their place ("Should I …?" is "Do I need to
…?", "How long should you boil …?" is "How long do you boil …?"), neither is impersonal ("Is
it worth …?", "What should be done …?") and the fact asks no opinion nor evaluation ("What do
you think of …?", "How much sleep is best …?"). A leading condition is skipped: "If you were
president, what would you do?" is a wish.

The same reading tells a manner from a fact: "How does homeopathy work?" asks the way, "Does
homeopathy work?" whether it does (`manner_against_fact`, reported as "yesno").

Chosen on the dev families and the QQP dev split only (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from eko.guard.language import detect_language
from eko.guard.normalize import fold_words
from eko.guard.rules_frames import is_yes_no
from eko.guard.rules_manner import asks_manner

Mood = Literal["present", "ability", "past", "future", "advice", "wish"]

# Pairs of moods whose answers differ.
_CONFLICTS = frozenset(
    frozenset(pair)
    for pair in (("past", "future"), ("past", "wish"), ("past", "advice"), ("future", "advice"))
)

# Letters only, accents kept (French participles are told by them), apostrophes and hyphens
# split: "a-t-elle" -> a, t, elle; "won't" -> won, t.
_WORD = re.compile(r"[^\W\d_]+")

_EN_AUXILIARIES: dict[str, Mood] = {
    "do": "present", "does": "present", "don": "present", "doesn": "present",
    "is": "present", "are": "present", "am": "present", "isn": "present", "aren": "present",
    "can": "ability", "could": "ability", "may": "ability", "might": "ability",
    "couldn": "ability", "must": "advice", "mustn": "advice",
    "did": "past", "didn": "past", "was": "past", "were": "past", "wasn": "past",
    "weren": "past", "has": "past", "have": "past", "had": "past", "hasn": "past",
    "haven": "past",
    "will": "future", "shall": "future", "won": "future",
    "should": "advice", "shouldn": "advice", "ought": "advice",
    "would": "wish", "wouldn": "wish",
}  # fmt: skip
# How far into an English question its main auxiliary may stand ("In what year did …").
_EN_REACH = 4
# "has" / "have" make a past only with a participle after them ("Has Google stopped …",
# "Have you ever been …"); "Which has better exclusives?" is a present possession.
_EN_PERFECT = frozenset({"has", "have", "hasn", "haven"})
_EN_IRREGULAR_PARTICIPLES = frozenset(
    {
        "been", "done", "gone", "seen", "made", "had", "got", "gotten", "taken", "given",
        "known", "found", "lost", "won", "left", "become", "come", "run", "begun", "bought",
        "brought", "thought", "taught", "told", "said", "heard", "felt", "kept", "met", "paid",
        "put", "read", "sent", "spent", "built", "stood", "understood", "written", "eaten",
        "fallen", "forgotten", "grown", "held", "hit", "hurt", "let", "meant", "quit", "set",
        "slept", "sold", "spoken", "stolen", "swum", "thrown", "worn", "driven", "flown",
        "drunk", "sung", "broken", "chosen", "risen", "shown", "lived",
    }
)  # fmt: skip
# The asker, or anyone in their place ("How long should you boil crab legs?").
_ASKER = frozenset({"i", "we", "one", "you", "je", "j", "nous", "on", "tu", "vous"})
# A present question that asks an opinion or an evaluation asks what an advice question asks
# ("What do you think of …?", "How much sleep is best …?" / "Should …?").
_EVALUATIVE = frozenset(
    {
        "think", "opinion", "opinions", "views", "best", "better", "ideal", "ideally",
        "recommended", "advisable", "wise", "worth", "preferable", "pensez", "penses",
        "avis", "meilleur", "meilleure", "mieux", "conseillé", "recommandé",
    }
)  # fmt: skip
# A leading condition is not the main clause: "If you were president, what would you do?"
_CONDITION = re.compile(r"^\s*(?:if|when|suppose|supposing|imagine|si|quand)\b[^,]*,\s*", re.I)

_FR_ABILITY = frozenset(
    {
        "peut", "peux", "puis", "pouvons", "pouvez", "peuvent", "pourrait", "pourrais",
        "pourraient", "pourrions", "pourriez",
    }
)  # fmt: skip
_FR_ADVICE = frozenset(
    {
        "devrait", "devrais", "devraient", "devrions", "devriez", "doit", "dois", "doivent",
        "devons", "devez", "faut", "faudrait",
    }
)  # fmt: skip
_FR_GO = frozenset({"va", "vas", "vais", "vont", "allons", "allez"})
_FR_FUTURES = frozenset(
    {
        "sera", "seront", "serai", "aura", "auront", "aurai", "fera", "feront", "ira",
        "iront", "pourra", "pourront", "viendra", "viendront", "verra", "verront", "saura",
        "devra", "devront", "faudra", "voudra",
    }
)  # fmt: skip
_FR_HAVE = frozenset({"a", "ai", "as", "avons", "avez", "ont"})
_FR_BE = frozenset({"est", "sont", "suis", "es", "sommes", "êtes"})
_FR_PAST = frozenset({"était", "étaient", "étais", "fut", "furent", "avait", "avaient"})
# Words that may stand between an auxiliary and its participle or infinitive.
_FR_BETWEEN = frozenset(
    {
        "t", "il", "elle", "ils", "elles", "on", "je", "tu", "nous", "vous", "se", "s", "me",
        "m", "te", "y", "en", "le", "la", "les", "l", "lui", "leur", "ne", "n", "pas",
        "jamais", "déjà", "encore", "bien", "vraiment", "toujours", "enfin",
    }
)  # fmt: skip
_FR_PARTICIPLE = re.compile(r"(?:é|ée|és|ées|i|ie|is|ies|u|ue|us|ues|int|it|ert|ort|eu|fait)$")
# Verbs whose past takes "être" without a reflexive pronoun ("est-il né …?").
_FR_BE_VERBS = re.compile(
    r"^(?:allé|venu|né|mort|parti|arrivé|devenu|tombé|resté|sorti|entré|rentré|monté"
    r"|descendu|passé|retourné|revenu)(?:e|s|es)?$"
)
_FR_INFINITIVE = re.compile(r"(?:er|ir|re|oir)$")
# The conditional ("visiterais-tu", "aimerait"), but not what only ends like it.
_FR_CONDITIONAL = re.compile(r"r(?:ais|ait|ions|iez|aient)$")
_FR_NOT_CONDITIONAL = frozenset({"marais"})


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _is_lower(text: str, word: str) -> bool:
    """Whether `word` is written in lower case in `text` (a participle, not "a Paris")."""
    return re.search(rf"(?<![^\W\d_]){re.escape(word)}(?![^\W\d_])", text) is not None


def _english_mood(words: list[str]) -> tuple[Mood, int] | None:
    """The mood of the first auxiliary in the first words, and where it stands."""
    for index, word in enumerate(words[:_EN_REACH]):
        mood = _EN_AUXILIARIES.get(word)
        if mood is None:
            continue
        after = words[index + 1 : index + 6]
        if word == "won" and after[:1] != ["t"]:
            return None  # "won" the verb
        if word in _EN_PERFECT and not any(
            w.endswith("ed") or w in _EN_IRREGULAR_PARTICIPLES for w in after[:4]
        ):
            return None  # a possession, not a perfect
        if mood == "present" and "going" in after and "to" in after:
            return "future", index  # "Is Netflix going to …"
        if word == "shall" and after[:1] and after[0] in _ASKER:
            return "advice", index  # "Shall I …?"
        return mood, index
    return None


def _next_content(words: list[str], start: int) -> str | None:
    for word in words[start : start + 4]:
        if word not in _FR_BETWEEN:
            return word
    return None


def _french_mood(text: str, words: list[str]) -> Mood | None:
    """The first French marker: advice, the near or simple future, a compound past, or the
    conditional; else present for a yes/no question ("Les chats mangent-ils …?")."""
    for index, word in enumerate(words):
        if word in _FR_ABILITY:
            return "ability"
        if word in _FR_ADVICE:
            return "advice"
        if word in _FR_FUTURES:
            return "future"
        if word in _FR_PAST:
            return "past"
        following = _next_content(words, index + 1)
        if following is None:
            continue
        if word in _FR_GO and _FR_INFINITIVE.search(following):
            return "future"
        if word in _FR_HAVE and _FR_PARTICIPLE.search(following) and _is_lower(text, following):
            return "past"
        reflexive = index > 0 and words[index - 1] in {"s", "se"}
        if (
            word in _FR_BE
            and (reflexive or _FR_BE_VERBS.match(following))
            and _FR_PARTICIPLE.search(following)
        ):
            return "past"
        if (
            len(word) >= 6
            and _FR_CONDITIONAL.search(word)
            and word not in _FR_NOT_CONDITIONAL
            and not word.endswith("trait")
        ):
            return "wish"
    return "present" if is_yes_no(text) else None


def _main_clause(text: str) -> str:
    return _CONDITION.sub("", text, count=1)


# The check reads the asked question once per candidate, and stored questions recur across
# lookups: the reading (a language guess and a few regexes) is kept for the texts seen last.
@lru_cache(maxsize=4096)
def mood(text: str) -> Mood | None:
    """The question's time and mood, or None when nothing marks it."""
    text = _main_clause(text)
    words = _words(text)
    language = detect_language(text)
    if language == "fr":
        return _french_mood(text, words)
    found = _english_mood(words) if language == "en" else None
    return found[0] if found is not None else None


def _impersonal(words: list[str]) -> bool:
    """ "Is it worth …?", "Is there …?", "What should be done …?", "Est-il bon de …?",
    "Vaut-il mieux …?", "Que doit-on …" (on: the asker)."""
    found = _english_mood(words)
    if found is not None:
        _, index = found
        return words[index + 1 : index + 2] in (["it"], ["there"], ["be"])
    pairs = set(pairwise(words))
    return bool(pairs & {("est", "il"), ("vaut", "il"), ("c", "est"), ("serait", "il")})


def _advice_may_answer(present: list[str], advice: list[str]) -> bool:
    """Whether an advice question and a present one may share an answer: one asks about the
    asker, either is impersonal, or the present one asks an opinion or an evaluation."""
    return bool(
        _ASKER & (set(present) | set(advice))
        or _impersonal(present)
        or _impersonal(advice)
        or _EVALUATIVE & set(present)
    )


def moods_differ(question: str, stored: str) -> tuple[Mood, Mood] | None:
    """The two moods when their answers differ, else None."""
    asked, kept = mood(question), mood(stored)
    if asked is None or kept is None or asked == kept:
        return None
    if frozenset((asked, kept)) in _CONFLICTS:
        return asked, kept
    if {asked, kept} == {"present", "advice"}:
        words_q, words_s = _words(_main_clause(question)), _words(_main_clause(stored))
        present, advice = (words_q, words_s) if asked == "present" else (words_s, words_q)
        if not _advice_may_answer(present, advice):
            return asked, kept
    return None


# A yes/no question that asks whether there is a way asks how ("Is there a way to …?", "Y
# a-t-il un moyen de …?"); a "how" that asks how one knows asks whether ("How do I know if I
# have the flu?" / "Do I have the flu?").
_A_WAY = frozenset({"way", "ways", "possible", "moyen", "moyens", "facon", "possibilite"})
_KNOWING = frozenset({"know", "knows", "savoir", "sait", "sais"})
# Either side comparing ("Is X the same as Y?" / "How are X and Y different?"), or the yes/no
# side asking how as well ("… If so, how?"): both ask the same thing.
_COMPARING = frozenset(
    {
        "same", "different", "difference", "differ", "compare", "versus", "vs", "meme",
        "differents", "differente", "comparer",
    }
)  # fmt: skip


def manner_against_fact(question: str, stored: str) -> tuple[list[str], list[str]] | None:
    """One side asks how ("How does homeopathy work?"), the other whether, as a present fact
    ("Does homeopathy work?"): the way against a yes or a no. Not against ability ("Can I
    learn guitar alone?" / "How can I …?"), a prediction, or a question whether there is a
    way."""
    for asked, other, flip in ((question, stored, False), (stored, question, True)):
        if not asks_manner(asked) or asks_manner(other) or mood(asked) not in (None, "present"):
            continue  # "How can green tea help …?" asks about an ability
        if mood(other) != "present" or not is_yes_no(_main_clause(other)):
            continue
        yes_no, manner = set(fold_words(other)), set(fold_words(asked))
        if _A_WAY & yes_no or {"how", "comment"} & yes_no or _KNOWING & manner:
            continue
        if _COMPARING & (yes_no | manner):
            continue
        return (["yes/no"], ["how"]) if flip else (["how"], ["yes/no"])
    return None
