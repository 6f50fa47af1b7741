"""Show a text while it is generated without ever taking back what was shown.

A reply is cleaned after generation (the local sanitizer cuts leaked role labels, template
tokens and recited prompt lines; the writer strips internal flags). While streaming, the part
of the text that a later token could still change is held back: the rest, cleaned, is shown.
`StablePrefix` turns a growing raw text into such display deltas; the stored reply is always
the cleaned whole text, which the last event of a stream carries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from eko.llm.sanitize import _TEMPLATE_TOKEN, GENERIC_SPEAKERS

# A template token is short ("<|im_start|>", "<start_of_turn>", "[/INST]"): an opener this close
# to the end with no closer after it may still become one.
_TOKEN_MAX_CHARS = 24
_LABEL_LEAD = " \t>*_-["
_LABEL_TRAIL = set(" \t*_]")


class StablePrefix:
    """Display deltas of `clean(raw)`, holding back the raw tail that `unsafe_tail` names."""

    def __init__(self, clean: Callable[[str], str], unsafe_tail: Callable[[str], int]) -> None:
        self._clean = clean
        self._unsafe_tail = unsafe_tail
        self._raw = ""
        self.shown = ""

    @property
    def raw(self) -> str:
        return self._raw

    def feed(self, delta: str) -> str:
        """Add raw text; returns what may be shown now ("" when nothing new is safe)."""
        self._raw += delta
        held = self._unsafe_tail(self._raw)
        candidate = self._clean(self._raw[: len(self._raw) - held] if held else self._raw)
        if len(candidate) <= len(self.shown) or not candidate.startswith(self.shown):
            return ""
        new, self.shown = candidate[len(self.shown) :], candidate
        return new


def sanitizer_tail(
    assistant_name: str, speakers: Iterable[str] = (), prompt_texts: Sequence[str] = ()
) -> Callable[[str], int]:
    """How much of a raw local-model text `sanitize_reply` could still cut or change."""
    names = sorted(
        {n.strip().casefold() for n in (*GENERIC_SPEAKERS, "model", assistant_name, *speakers)}
        - {""}
    )
    sources = [_normalise(text) for text in prompt_texts if text]

    def unsafe(raw: str) -> int:
        # A template token opens a turn: what follows it on its line may be a role name.
        line = _TEMPLATE_TOKEN.sub("", raw[raw.rfind("\n") + 1 :])
        hold = _open_token_tail(raw)
        if line and (_could_be_label(line, names) or _could_be_echo(line, sources)):
            hold = max(hold, len(raw) - raw.rfind("\n") - 1)
        return hold

    return unsafe


def _open_token_tail(raw: str) -> int:
    window = raw[-_TOKEN_MAX_CHARS:]
    hold = 0
    for opener, closer in (("<", ">"), ("[", "]")):
        index = window.rfind(opener)
        if index >= 0 and closer not in window[index:]:
            hold = max(hold, len(window) - index)
    return hold


def _could_be_label(line: str, names: Sequence[str]) -> bool:
    """True while the line may still become "Name:" (a turn the sanitizer cuts)."""
    text = line.lstrip(_LABEL_LEAD).casefold()
    if not text:
        return True
    for name in names:
        if name.startswith(text):
            return True
        if text.startswith(name) and set(text[len(name) :]) <= _LABEL_TRAIL:
            return True
    return False


def _could_be_echo(line: str, sources: Sequence[str]) -> bool:
    """True while the line is still a piece of a system prompt (a recital the sanitizer drops)."""
    text = _normalise(line)
    return bool(text) and any(text in source for source in sources)


def _normalise(text: str) -> str:
    return " ".join(text.split()).casefold()
