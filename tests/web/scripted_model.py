"""The scripted model behind the browser tests: the user's last message picks the answer.

    contains "lent"       -> 40 words, 0.1 s apart (about 4 s: time to stop or switch rooms)
    contains "casse"      -> the model fails: the chat answers with its canned fallback
    contains "injoignable" -> the model cannot be reached (a fallback whose cause is unreachable)
    contains "markdown"   -> a heading, a list and a fenced code block
    contains "version"    -> "Version N." (N counts the calls: regenerate shows a new one)
    contains "tronque"    -> an answer cut at the token limit mid-word (stored truncated)
    contains "consignes"  -> "Consigne reçue : CONSIGNE-X." when the writer's system prompt holds
                             CONSIGNE-X (the room's instructions), else "Consigne reçue : aucune."
    contains "jointe"     -> "Pièce jointe lue : PIECE-X." when the writer's system prompt holds
                             PIECE-X (an attached file's text), else "Pièce jointe lue : aucune."
    anything else         -> "Vous avez dit : <the message>" word by word, 0.02 s apart

Structured requests (JSON schema: classifiers, extraction) get "not json", so the chat's
deterministic fallbacks route them, as in tests/api/test_streaming_live_server.py.
"""

from __future__ import annotations

import itertools
import re

from eko.llm.errors import ProviderError, ProviderUnavailable
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest, ProviderResponse, Usage

SLOW_WORDS = tuple(f"lentement{i} " for i in range(40))
CUT_REPLY = "Voici le début d'une longue réponse, mais je n'ai pas pu fin"
MARKDOWN_REPLY = (
    "## Titre\n\n- un\n- deux\n\n```python\nprint('<b>bonjour</b>')\n```\n\nFin **gras**."
)


# The writer's note after the message, in the model's copy only ("(Answer in English.)",
# eko/prompts/writer/reply_in/): the scripted replies echo what the person wrote.
_LANGUAGE_NOTE = re.compile(r"\n\n\([^()\n]*\)\Z")


def said(request: ProviderRequest) -> str:
    """The last message as the person wrote it."""
    return _LANGUAGE_NOTE.sub("", request.messages[-1].content)


def _words(text: str, delay_s: float) -> Deltas:
    words = text.split(" ")
    parts = tuple(word + (" " if i < len(words) - 1 else "") for i, word in enumerate(words))
    return Deltas(parts, delay_s=delay_s)


def web_model() -> FunctionModel:
    counter = itertools.count(1)

    def answer(request: ProviderRequest) -> str | Deltas | ProviderResponse:
        if request.json_schema is not None:
            return "not json"
        last = said(request)
        if "lent" in last:
            return Deltas(SLOW_WORDS, delay_s=0.1)
        if "casse" in last:
            raise ProviderError("web", "scripted failure")  # not "unreachable": circuit stays shut
        if "injoignable" in last:  # counts towards the circuit (100 failures in the fixture)
            raise ProviderUnavailable("web", "connection refused (scripted)")
        if "markdown" in last:
            return _words(MARKDOWN_REPLY, 0.01)
        if "tronque" in last:
            return ProviderResponse(
                text=CUT_REPLY, usage=Usage(), model="web-script", truncated=True
            )
        if "consignes" in last:
            rule = re.search(r"CONSIGNE-[A-Z]+", request.messages[0].content)
            return f"Consigne reçue : {rule.group() if rule else 'aucune'}."
        if "jointe" in last:
            found = re.search(r"PIECE-[A-Z]+", request.messages[0].content)
            return f"Pièce jointe lue : {found.group() if found else 'aucune'}."
        if "version" in last:
            return Deltas(("Version ", f"{next(counter)}."), delay_s=0.05)
        return _words(f"Vous avez dit : {last}", 0.02)

    return FunctionModel(answer, name="web", model="web-script")
