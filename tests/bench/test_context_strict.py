"""The context bench's strict score: every evidence turn within one passage of the context or
the prompt; the answer string as a secondary column that one-word answers never enter; and the
prompt's passages (the memory section's blocks, each earlier chat message, not the question)."""

from __future__ import annotations

from eko.chat.memory_context import SECTION_TITLE
from eko.llm.types import ChatMessage
from eko_bench.context.content import Passages, passages
from eko_bench.context.prompt_recall import conversation_passages, memory_section

TURN = "Caroline went to the LGBTQ support group on 7 May and found it really powerful."
SUMMARY = (
    '[L1 Summary - chars 0-900 - 3 months ago]\nConversation: "Caroline talks about the'
    ' support group"\nActions: "none"'
)


def test_a_turn_whose_words_are_spread_over_two_passages_is_not_present() -> None:
    spread = "Caroline went to the LGBTQ support group.\nOn 7 May she found it really powerful."
    # Over the whole text the words add up: the loose rule's "present"...
    assert Passages.of([spread.replace("\n", " ")]).found([TURN])
    # ...but split on its lines (two recalled turns), no passage holds the turn.
    assert not Passages.split(spread).found([TURN])
    assert Passages.split(f"Ben: hello there\n{TURN}\nBen: bye now").found([TURN])


def test_every_evidence_turn_must_be_present() -> None:
    other = "I love painting sunsets by the lake with my kids."
    both = Passages.split(f"{TURN}\n\n{other}")
    assert both.found([TURN, other])
    assert not Passages.split(TURN).found([TURN, other])
    assert not Passages.split("").found([TURN])
    assert not both.found([])  # no evidence: never found


def test_a_summary_is_one_passage_and_other_blocks_one_per_line() -> None:
    text = f"### Relevant Past Context\n\n{SUMMARY}\n\n[2023-05-08 13:56]\nAna: hi\nBen: {TURN}"
    assert passages(text) == [
        "### Relevant Past Context",
        SUMMARY,
        "[2023-05-08 13:56]",
        "Ana: hi",
        f"Ben: {TURN}",
    ]


def test_one_word_answers_do_not_count_in_the_answer_column() -> None:
    context = Passages.split("She went back to work.\nThe family trip was in 7 May 2023.")
    assert not context.answer_found("work")
    assert not context.answer_found("Family")
    assert not context.answer_found("yes")
    assert context.answer_found("7 May 2023")
    # Two words across two passages are not a phrase of either.
    assert not Passages.split("back to\nwork today").answer_found("to work")


def test_the_prompt_passages_are_the_memory_section_and_the_earlier_messages() -> None:
    system = (
        "<luciform>persona: Caroline went to the LGBTQ support group</luciform>\n\n"
        "## About the user\nname: Ana\n\n"
        f"## {SECTION_TITLE}\n### Earlier in This Conversation\n\n[2023-05-08 13:56]\n"
        f"Ana: {TURN}\nBen: Nice!"
    )
    messages = [
        ChatMessage("system", system),
        ChatMessage("user", "I adopted a tortoise.", name="Ana"),
        ChatMessage("user", f"Did {TURN}?", name="Ben"),  # the question: not scored
    ]
    assert memory_section(messages).startswith("### Earlier in This Conversation")
    assert conversation_passages(messages) == [
        "### Earlier in This Conversation",
        "[2023-05-08 13:56]",
        f"Ana: {TURN}",
        "Ben: Nice!",
        "I adopted a tortoise.",
    ]
    # Without a memory section, the instructions are never scored.
    assert conversation_passages([ChatMessage("system", system.split("## ")[0]), messages[2]]) == []
