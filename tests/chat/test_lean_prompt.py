"""What the writer's compact prompt keeps for a small model (eko/chat/engine/lean_prompt.py)."""

from __future__ import annotations

from eko.chat.engine.lean_prompt import language_drifts, lean_profile, mode_hint, names_a_language
from eko.prompts.library import PromptLibrary, without_language


def test_a_message_that_names_the_language_it_wants_is_a_translation() -> None:
    assert names_a_language("Traduis en anglais : bonne nuit")
    assert names_a_language("How do you say 'cat' in Spanish?")
    assert names_a_language("translate this please")
    assert not names_a_language("Quelle est la capitale de l'Angleterre ?")
    assert not names_a_language("What is the capital of France?")


def test_drift_is_an_earlier_message_in_another_language() -> None:
    assert not language_drifts("fr", [])
    assert not language_drifts("fr", ["Bonjour, je voudrais un conseil sur mon vélo."])
    assert language_drifts("fr", ["What is the capital of Spain?", "Madrid."])


def test_the_normal_mode_is_cut_to_the_hint_for_this_intent() -> None:
    normal = PromptLibrary().text("writer/modes/normal.md")
    assert mode_hint(normal, "decision_support").startswith("decision_support:")
    assert mode_hint(normal, "small_talk").startswith("amabilities / small_talk:")
    assert mode_hint(normal, "general_question") == ""


def test_a_profile_that_says_nothing_is_left_out() -> None:
    assert lean_profile("name: unknown\nplan: pro (quota state: normal)") == ""
    kept = lean_profile("name: Lucie\nplan: free (quota state: warn)\nknown facts:\n- city: Lyon")
    assert kept == "name: Lucie\nknown facts:\n- city: Lyon"


def test_a_translation_drops_only_the_personas_language_line() -> None:
    library = PromptLibrary()
    for name in library.personas():
        persona = library.persona(name)
        assert "<language>" in persona
        kept = without_language(persona)
        assert "<language>" not in kept and "</language>" not in kept
        assert kept.count("\n") == persona.count("\n") - 1  # nothing else goes
        assert "<tone>" in kept and "<rules>" in kept
