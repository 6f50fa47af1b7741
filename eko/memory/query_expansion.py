"""Things a question's answer may have been said as: the one model call of multi-hop recall.

A list question ("What activities does Melanie partake in?") is answered by several turns
that share neither its words nor, for a small embedder, its meaning ("We went camping with
the kids last weekend"). The rule (eko.memory.multihop) tells such questions apart; this asks
the model, once per message, for a few things the people might have said, and each one is
recalled as a sub-query — by words and by meaning — within the same budget.

On LoCoMo's dev questions with the bundled 1.5B model, three phrases took the context's
content recall from 86.2% to 87.3% at 8k characters and from 93.1% to 93.8% at 16k; the
phrases are guesses ("She likes to paint"), so they add candidates, never replace the
question's own. A failed, late or empty answer leaves the rule's sub-queries as they were,
and the context's stats say why.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from string import Template

import structlog

from eko.config import Settings
from eko.llm.errors import LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary

log = structlog.get_logger("eko.memory")

PROMPT = "memory/expand.md"
PURPOSE = "memory_expand"
# Asked for this many lines, the first `memory_recall_expand` kept: asked for fewer, the
# bundled model repeats one idea three ways; asked for 8, its first lines differ.
ASKED = 8
MAX_TOKENS = 200
PHRASE_CHARS = 200
# The same question always gets the same phrases.
TEMPERATURE = 0.0
# What a model puts before a line: bullets, numbers ("2. - "), an opening quote.
_LINE_HEAD = re.compile(r"^\s*(?:(?:[-*•·]+|\d+[.)]|\(\d+\))\s*)*[\"“«]?\s*")
_LINE_TAIL = re.compile(r"\s*[\"”»]?\s*$")
_WORD = re.compile(r"[^\W_]{2,}")


@dataclass(frozen=True, slots=True)
class Expansion:
    phrases: list[str] = field(default_factory=list)
    # Why there are none when some were asked for (the model failed, was late, said nothing).
    error: str | None = None


class QueryExpander:
    def __init__(self, *, runtime: LLMRuntime, prompts: PromptLibrary, settings: Settings) -> None:
        self._runtime = runtime
        self._prompts = prompts
        self._count = settings.memory_recall_expand
        self._timeout_s = settings.memory_recall_expand_timeout_s

    @property
    def enabled(self) -> bool:
        return self._count > 0

    async def expand(
        self, question: str, *, room_id: str | None = None, message_id: str | None = None
    ) -> Expansion:
        """Up to `memory_recall_expand` phrases, never the question itself, each once."""
        if not self.enabled or not question.strip():
            return Expansion()
        prompt = Template(self._prompts.text(PROMPT)).safe_substitute(
            question=" ".join(question.split()), asked=str(max(ASKED, self._count))
        )
        try:
            # Bounded well below the memory node's own timeout: a busy model costs the
            # phrases, never the context.
            async with asyncio.timeout(self._timeout_s):
                completion = await self._runtime.complete(
                    [ChatMessage("user", prompt)],
                    purpose=PURPOSE,
                    room_id=room_id,
                    message_id=message_id,
                    max_tokens=MAX_TOKENS,
                    temperature=TEMPERATURE,
                )
        except TimeoutError:
            return self._failed(room_id, f"no answer within {self._timeout_s:g} s")
        except LLMError as exc:
            return self._failed(room_id, f"model failed: {str(exc)[:300]}")
        phrases = _distinct(phrase_lines(completion.text), question)
        if not phrases:
            return self._failed(room_id, "the model gave no phrase")
        return Expansion(phrases[: self._count])

    @staticmethod
    def _failed(room_id: str | None, reason: str) -> Expansion:
        log.warning("memory.expand.failed", room_id=room_id, error=reason)
        return Expansion(error=reason)


def phrase_lines(text: str) -> list[str]:
    """One phrase per line that has a word, without bullets, numbers or quotes, cut to
    PHRASE_CHARS ("{}" or "---" is not a phrase)."""
    lines = (_LINE_TAIL.sub("", _LINE_HEAD.sub("", line)) for line in text.splitlines())
    return [" ".join(line.split())[:PHRASE_CHARS] for line in lines if _WORD.search(line)]


def _distinct(phrases: list[str], question: str) -> list[str]:
    seen = {_key(question)}
    kept: list[str] = []
    for phrase in phrases:
        text = " ".join(str(phrase).split())
        if text and _key(text) not in seen:
            seen.add(_key(text))
            kept.append(text)
    return kept


def _key(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" ?.!")
