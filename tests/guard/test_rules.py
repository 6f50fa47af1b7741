"""Pure rules of the memory guard: normalization, key, scope, answer filters, false-hit check,
and the serving decision."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from eko.guard.check import false_hit_check, is_negated, names, numbers
from eko.guard.decide import Candidate, decide, usage_increment
from eko.guard.normalize import key_hash, normalize_question, strip_mention
from eko.guard.scope import InvalidScope, Scope, lookup_scopes
from eko.guard.validation import answer_refusal, reply_privacy, reply_refusal

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_normalization_ignores_case_spacing_and_edge_punctuation_but_keeps_accents() -> None:
    assert normalize_question("  How do I   reset my PASSWORD ?! ") == "how do i reset my password"
    assert normalize_question("Où est la gare ?") != normalize_question("Ou est la gare ?")
    assert normalize_question("l’heure") == normalize_question("l'heure")


def test_key_hash_depends_on_scope_and_normalized_question() -> None:
    shared = Scope("eko").key
    assert key_hash(shared, "Reset my password?") == key_hash(shared, "reset my password")
    assert key_hash(shared, "reset my password") != key_hash(Scope("lisa").key, "reset my password")
    assert len(key_hash(shared, "x")) == 64


def test_strip_mention_removes_the_assistant_name_only_at_the_edges() -> None:
    assert (
        strip_mention("@Eko, how do I reset my password?", "Eko") == "how do I reset my password?"
    )
    assert strip_mention("How do I reset my password, Eko?", "Eko") == "How do I reset my password?"
    assert strip_mention("Is Eko open source?", "Eko") == "Is Eko open source?"
    assert strip_mention("Eko est-il libre ?", "Eko") == "Eko est-il libre ?"
    assert strip_mention("Eko: what time is it?", "Eko") == "what time is it?"
    assert strip_mention("Mon mot de passe Eko ?", "Eko") == "Mon mot de passe Eko ?"
    assert strip_mention("what time is it @eko", "Eko") == "what time is it"


def test_scope_keys_round_trip_and_reject_separators() -> None:
    private = Scope("eko", "abc123")
    assert private.key == "persona:eko|user:abc123" and not private.shared
    assert Scope.parse(private.key) == private
    assert Scope.parse("persona:eko") == Scope("eko")
    assert [s.key for s in lookup_scopes("eko", "u1")] == ["persona:eko", "persona:eko|user:u1"]
    with pytest.raises(InvalidScope):
        Scope("eko|user:someone-else")
    with pytest.raises(InvalidScope):
        Scope.parse("user:1")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty_answer"),
        ("La réponse est 42. <non valide>", "marked_invalid"),
        ("<NON VALIDE> draft", "marked_invalid"),
        ("Voici la liste : un, deux, trois…", "truncated"),
        ("```python\nprint(1)\n", "incomplete"),
        ("Tout va bien.", None),
    ],
)
def test_answer_refusals(answer: str, reason: str | None) -> None:
    assert answer_refusal(answer) == reason


def test_reply_refusals_follow_metadata() -> None:
    ok = "A complete answer."
    assert reply_refusal(message_type="fallback", answer=ok, meta={}) == "not_an_answer:fallback"
    assert reply_refusal(message_type="message", answer=ok, meta={"truncated": True}) == "truncated"
    assert reply_refusal(message_type="message", answer=ok, meta={"fallback": "llm_error"})
    assert (
        reply_refusal(message_type="message", answer=ok, meta={"personal_context": True})
        == "personal_context"
    )
    assert (
        reply_refusal(message_type="message", answer=ok, meta={"personal_context": False}) is None
    )
    assert reply_refusal(message_type="message", answer=ok, meta={}) is None


def test_reply_privacy_decides_who_may_be_served() -> None:
    assert reply_privacy({"personal_context": False}) == "shared"
    assert reply_privacy({}) == "private"
    history = {"personal_context": True, "personal_context_sources": ["history"]}
    assert reply_privacy(history) == "private"
    own_settings = {"personal_context": True, "personal_context_sources": ["history", "settings"]}
    assert reply_privacy(own_settings) == "private"
    facts = {"personal_context": True, "personal_context_sources": ["history", "facts"]}
    assert reply_privacy(facts) == "personal"
    assert reply_privacy({"personal_context": True}) == "personal"
    assert reply_privacy({"personal_context": True, "personal_context_sources": []}) == "personal"
    assert reply_refusal(message_type="message", answer="ok", meta=history) is None


def test_negation_is_detected_in_english_and_french() -> None:
    assert is_negated("Why doesn't my code compile?")
    assert is_negated("Can't I sleep here?")
    assert is_negated("Pourquoi n'y a-t-il pas de bus ?")
    assert is_negated("Comment dormir sans bruit ?")
    assert not is_negated("Why does my code compile?")
    assert not is_negated("Pourquoi y a-t-il des bus ?")


def test_numbers_and_names_are_extracted() -> None:
    assert numbers("Python 2.0 or python 3?") == {"2", "3"}
    assert numbers("1,5 kg ou 1.50 kg") == {"1.5"}
    assert names("How do I learn Python in Paris?") == {"python", "paris"}
    assert names("how do i learn python") == frozenset()  # no case signal
    assert names("What Is The Best Way To Learn Java?") == frozenset()  # Title Case throughout
    assert names("What does NASA do?") == {"nasa"}


@pytest.mark.parametrize(
    ("question", "stored", "failed"),
    [
        ("Why does my code compile?", "Why doesn't my code compile?", ("negation",)),
        (
            "Est-ce que le musée est ouvert le lundi ?",
            "Le musée n'est pas ouvert le lundi ?",
            ("negation",),
        ),
        ("How do I install Python 2?", "How do I install Python 3?", ("numbers",)),
        ("How do I learn Java?", "How do I learn Python?", ("names",)),
        ("how do i learn java", "How do I learn Python?", ("names",)),
        # Paraphrases and added details pass.
        ("What can I do to improve my handwriting?", "How can I have good handwriting?", ()),
        ("Where can I buy floor tiles in Sydney?", "Where can I buy floor tiles?", ()),
        ("What are the 10 best books on Go?", "What are the best books on Go?", ()),
        ("why is trump popular", "Why is Trump popular?", ()),
    ],
)
def test_false_hit_check(question: str, stored: str, failed: tuple[str, ...]) -> None:
    result = false_hit_check(question, stored)
    assert result.failed == failed
    assert result.passed is (not failed)
    assert result.as_meta()["passed"] is (not failed)


def _candidate(name: str, question: str, score: float, age_days: int) -> Candidate[str]:
    return Candidate(name, question, score, NOW - timedelta(days=age_days))


def test_decide_serves_the_best_candidate_at_or_above_the_threshold() -> None:
    candidates = [
        _candidate("low", "How do I bake bread?", 0.84, 0),
        _candidate("best", "How do I bake bread?", 0.93, 5),
    ]
    decision = decide("How can I bake bread?", candidates, threshold=0.85)
    assert decision.served is not None and decision.served.candidate.item == "best"
    assert [j.candidate.item for j in decision.judged] == ["best", "low"]
    assert decide("How can I bake bread?", candidates, threshold=0.95).served is None


def test_decide_breaks_ties_by_most_recent() -> None:
    candidates = [
        _candidate("old", "How do I bake bread?", 0.9, 30),
        _candidate("new", "How do I bake bread?", 0.9, 1),
    ]
    decision = decide("how do i bake bread", candidates, threshold=0.85)
    assert decision.served is not None and decision.served.candidate.item == "new"


def test_decide_skips_a_candidate_the_check_rejects() -> None:
    candidates = [
        _candidate("negated", "Why doesn't bread rise?", 0.97, 0),
        _candidate("same", "Why does my bread rise?", 0.91, 0),
    ]
    decision = decide("Why does bread rise?", candidates, threshold=0.9)
    assert decision.served is not None and decision.served.candidate.item == "same"
    assert [j.candidate.item for j in decision.rejected_by_check] == ["negated"]
    unchecked = decide("Why does bread rise?", candidates, threshold=0.9, check=None)
    assert unchecked.served is not None and unchecked.served.candidate.item == "negated"


def test_usage_increment_is_two_for_strong_hits() -> None:
    assert usage_increment(0.95) == 2
    assert usage_increment(0.99) == 2
    assert usage_increment(0.949) == 1
