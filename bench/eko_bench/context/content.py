"""Content recall: is what the question needs actually written in the context — in one place?

Text is normalised (casefold, accents and punctuation stripped). A context (or a prompt) is
split into *passages* on its own block boundaries (`passages`): a summary is one passage, every
other line is one (a recalled or recent turn, a fact, a heading); in a rendered prompt each chat
message is one more. An evidence turn is *present* in a passage when its whole normalised text
appears there, or when it has at least MIN_CONTENT_TOKENS distinct content tokens (words of 3+
letters outside a stop list, or numbers) and at least PRESENT_SHARE of them are in that one
passage. Shorter turns ("Wow, great!") only count verbatim. A question is *found* (the primary,
strict score) when every evidence turn is present, each within one passage — words spread
over the whole context do not add up. The answer matched as a phrase within a passage is a
secondary column, where an answer of fewer than MIN_ANSWER_TOKENS content words ("work",
"Family") never counts: one word is in many contexts by chance. The bench checks the rule with
two controls scored the same way: random turns of the same conversation at the same budget,
and the context built for another conversation's question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from eko.text import fold_plain

PRESENT_SHARE = 0.8
MIN_CONTENT_TOKENS = 3
# The answer column: answers with fewer content words are not scored as found.
MIN_ANSWER_TOKENS = 2
# The first line of a rendered summary (eko.memory.context_parts.render_summary).
_SUMMARY = re.compile(r"^\[L\d+ Summary")
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


def passages(text: str) -> list[str]:
    """`text` split on its blocks: blank lines end a block; a summary block is one passage,
    any other block gives one passage per non-empty line."""
    result: list[str] = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        if lines and _SUMMARY.match(lines[0]):
            result.append("\n".join(lines))
        else:
            result.extend(lines)
    return result


@dataclass(frozen=True, slots=True)
class Passages:
    """A context as the strict rule reads it: its passages, each normalised once."""

    contexts: tuple[Context, ...]
    chars: int

    @classmethod
    def of(cls, pieces: Iterable[str], chars: int | None = None) -> Passages:
        """`pieces`: passages already split (`passages`); `chars`: the size reported (default:
        their total)."""
        kept = [piece for piece in pieces if piece.strip()]
        total = chars if chars is not None else sum(len(piece) for piece in kept)
        return cls(tuple(Context.of(piece) for piece in kept), total)

    @classmethod
    def split(cls, text: str) -> Passages:
        return cls.of(passages(text), len(text))

    def has_turn(self, turn_text: str) -> bool:
        return any(turn_present(turn_text, passage) for passage in self.contexts)

    def found(self, evidence_texts: Sequence[str]) -> bool:
        """The strict score: every evidence turn present, each within one passage."""
        return bool(evidence_texts) and all(self.has_turn(text) for text in evidence_texts)

    def answer_found(self, answer: str) -> bool:
        """The secondary score: the answer as a phrase within one passage, when it has at
        least MIN_ANSWER_TOKENS content words."""
        normalized = fold_plain(answer)
        if len(content_tokens(normalized)) < MIN_ANSWER_TOKENS:
            return False
        return any(passage.has_phrase(normalized) for passage in self.contexts)


def approx_tokens(chars: int) -> int:
    """Tokens ≈ characters / 4 (English text with BPE tokenizers; no tokenizer is loaded)."""
    return (chars + 3) // 4
