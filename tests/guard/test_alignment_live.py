"""The verifier's alignment through a live server over real sockets (issue 36): with thresholds
loose enough that the cosine alone would serve every question below, a trap of each kind is
answered by the model (its refusal named in the reply's metadata) while its paraphrase gets
the cached answer."""

from __future__ import annotations

from typing import Any

import httpx

from eko.llm.providers import FunctionModel
from tests.api.live_server import running_eko

LOOSE = {"en": 0.25, "fr": 0.25, "und": 0.25}
ENTRIES = {
    "Is red wine healthy?": "In moderation, the evidence is mixed.",
    "What are the disadvantages of WhatsApp?": "It needs a phone number.",
    "Le riz complet est-il bon pour la santé ?": "Oui, il garde ses fibres.",
    "How do I learn Kotlin?": "Start with the official Kotlin Koans.",
    "Comment apprendre le Kotlin ?": "Commencez par les Kotlin Koans.",
    "Will Kotlin replace Java?": "Not soon: most Android code still mixes both.",
    "Le Kotlin va-t-il remplacer Java ?": "Pas de sitôt : beaucoup de code mêle les deux.",
    "How does garbage collection work in Kotlin?": "The JVM's collector does it.",
    "How do I learn C++?": "Start with A Tour of C++.",
}
# (asked, the entry it must not get, the rule that refuses it)
TRAPS = [
    ("Which red wine is healthy?", "Is red wine healthy?", "yesno"),
    (
        "What are the advantages and disadvantages of WhatsApp?",
        "What are the disadvantages of WhatsApp?",
        "content",
    ),
    ("Le riz est-il bon pour la santé ?", "Le riz complet est-il bon pour la santé ?", "content"),
    # A manner against a decision or an outcome (rules_words.kinds_differ).
    ("Should I learn Kotlin?", "How do I learn Kotlin?", "kind"),
    ("What do I gain from learning Kotlin?", "How do I learn Kotlin?", "kind"),
    ("Faut-il apprendre le Kotlin ?", "Comment apprendre le Kotlin ?", "kind"),
    # A manner against a when or a definition (rules_manner.py), an opposite (rules_words.py).
    ("When should I learn Kotlin?", "How do I learn Kotlin?", "kind"),
    ("Qu'est-ce que le Kotlin ?", "Comment apprendre le Kotlin ?", "kind"),
    (
        "Le riz complet est-il mauvais pour la santé ?",
        "Le riz complet est-il bon pour la santé ?",
        "opposites",
    ),
    # A past fact or an opinion against a prediction (rules_mood.py).
    ("Did Kotlin replace Java?", "Will Kotlin replace Java?", "mood"),
    ("Le Kotlin devrait-il remplacer Java ?", "Le Kotlin va-t-il remplacer Java ?", "mood"),
    # Whether against how (rules_mood.manner_against_fact).
    (
        "Does garbage collection work in Kotlin?",
        "How does garbage collection work in Kotlin?",
        "yesno",
    ),
    # A name's closing symbol (rules_align.symbols_differ).
    ("How do I learn C?", "How do I learn C++?", "names"),
]
PARAPHRASES = [
    ("Is red wine good for your health?", "Is red wine healthy?"),
    ("What are the drawbacks of WhatsApp?", "What are the disadvantages of WhatsApp?"),
    (
        "Est-ce que le riz complet est bon pour la santé ?",
        "Le riz complet est-il bon pour la santé ?",
    ),
    ("What is the best way to learn Kotlin?", "How do I learn Kotlin?"),
    ("Is Kotlin going to replace Java?", "Will Kotlin replace Java?"),
]


def _ask(client: httpx.Client, text: str) -> dict[str, Any]:
    room = client.post("/v1/rooms", json={"kind": "direct"}).json()["id"]
    reply = client.post(f"/v1/rooms/{room}/messages", json={"content": text})
    assert reply.status_code == 201, reply.text
    message: dict[str, Any] = reply.json()["assistant_message"]
    return message


def test_a_trap_is_not_served_while_its_paraphrase_is(database_url: str) -> None:
    model = FunctionModel.constant("The model's own answer.")
    with (
        running_eko(database_url, [model], guard_thresholds=LOOSE) as eko,
        httpx.Client(base_url=eko.url, headers=eko.headers, timeout=30) as client,
    ):
        staff = {"Authorization": f"Bearer {eko.staff_key}"}
        for question, answer in ENTRIES.items():
            created = client.post(
                "/v1/staff/memory", json={"question": question, "answer": answer}, headers=staff
            )
            assert created.status_code == 201, created.text
        for asked, _entry, rule in TRAPS:
            reply = _ask(client, asked)
            assert reply["type"] != "cached_response", (asked, reply)
            refusal = reply["metadata"]["memory_guard"]
            assert refusal["served"] is False
            assert rule in refusal["reason"].split(","), refusal
            assert refusal["nearest"]["above_threshold"] is True
        for asked, entry in PARAPHRASES:
            reply = _ask(client, asked)
            assert reply["type"] == "cached_response", (asked, reply)
            assert reply["content"] == ENTRIES[entry]
