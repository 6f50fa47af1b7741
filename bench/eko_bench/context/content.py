"""Content recall: is what the question needs actually written in the context?

Text is normalised (casefold, accents and punctuation stripped). An evidence turn is *present*
when its whole normalised text appears in the normalised context, or when it has at least
MIN_CONTENT_TOKENS distinct content tokens (words of 3+ letters outside a stop list, or
numbers) and at least PRESENT_SHARE of them appear in the context. Shorter turns ("Wow,
great!") only count verbatim: a few common words are in any context by chance. A question is
*found* when all its evidence turns are present, or its normalised answer appears in the
context as a phrase. The bench checks that the rule is strict: each context is also scored
against the questions of another conversation (the "unrelated" control), which must stay low.
"""

from __future__ import annotations

from dataclasses import dataclass

from eko.text import fold_plain

PRESENT_SHARE = 0.8
MIN_CONTENT_TOKENS = 3
# Function words (English: LoCoMo's language; a few French ones for Eko's own rooms).
_STOP_TEXT = """
    the and for are but not you your yours with this that these those from have has had was
    were been being will would could should can did does doing done what when where which who
    whom why how all any both each few more most other some such only own same than too very
    just about into over after before again then once here there out off our ours they them
    their theirs his her hers him she its it is be to of in on
    at by as or an a so if do no yes yeah oh wow really also much many get got like one two
    let know think thanks thank going gonna something things thing well way lot make made
    les des une est pas que qui pour dans sur avec mais par son ses aux nous vous ils elle
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


def content_tokens(normalized: str) -> set[str]:
    return {t for t in normalized.split() if t not in STOP_WORDS and (len(t) >= 3 or t.isdigit())}


@dataclass(frozen=True, slots=True)
class Context:
    """A context as the scorer sees it: normalised text (padded for phrase search) and tokens."""

    padded: str
    tokens: frozenset[str]
    chars: int

    @classmethod
    def of(cls, text: str) -> Context:
        normalized = fold_plain(text)
        return cls(f" {normalized} ", frozenset(normalized.split()), len(text))

    def has_phrase(self, normalized: str) -> bool:
        return bool(normalized) and f" {normalized} " in self.padded


def turn_present(turn_text: str, context: Context) -> bool:
    normalized = fold_plain(turn_text)
    if context.has_phrase(normalized):
        return True
    tokens = content_tokens(normalized)
    if len(tokens) < MIN_CONTENT_TOKENS:
        return False
    return len(tokens & context.tokens) >= PRESENT_SHARE * len(tokens)


def answer_present(answer: str, context: Context) -> bool:
    normalized = fold_plain(answer)
    # An answer with no content token ("no", "yes", "a lot") says nothing when it appears.
    return bool(content_tokens(normalized)) and context.has_phrase(normalized)


def found(evidence_texts: list[str], answer: str, context: Context) -> bool:
    if evidence_texts and all(turn_present(text, context) for text in evidence_texts):
        return True
    return answer_present(answer, context)


def approx_tokens(chars: int) -> int:
    """Tokens ≈ characters / 4 (English text with BPE tokenizers; no tokenizer is loaded)."""
    return (chars + 3) // 4
