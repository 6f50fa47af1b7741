"""The context bench's scoring: content recall, baselines, and the summary cache."""

from __future__ import annotations

import json
from pathlib import Path

from eko.llm.providers import FunctionModel
from eko.llm.types import ChatMessage, ProviderRequest
from eko.text import fold_plain
from eko_bench.context.baselines import BM25, PastTurn, bm25_context, random_context
from eko_bench.context.content import Context, Passages, answer_present, turn_present
from eko_bench.context.summary_cache import DiskCachedProvider

TURN = "Caroline went to the LGBTQ support group on 7 May and found it really powerful."


def test_normalisation_strips_case_accents_and_punctuation() -> None:
    assert fold_plain("Élodie, À l'Hôtel-Dieu !") == "elodie a l hotel dieu"


def test_a_turn_is_present_verbatim_or_by_most_of_its_content_words() -> None:
    assert turn_present(TURN, Context.of(f"Recent: {TURN.upper()} Then more."))
    paraphrase = "On 7 May Caroline found the LGBTQ support group powerful."
    assert turn_present(TURN, Context.of(paraphrase))
    # Half the content words: not present.
    assert not turn_present(TURN, Context.of("Caroline went to a group on Tuesday."))


def test_a_short_turn_only_counts_verbatim() -> None:
    short = "Wow, that's great!"
    assert not turn_present(short, Context.of("great news, wow, that is nice"))
    assert turn_present(short, Context.of("she said: wow that's great! and left"))


def test_the_answer_counts_as_a_phrase_and_never_when_it_is_a_function_word() -> None:
    assert answer_present("7 May 2023", Context.of("It was on 7 May 2023, at noon."))
    assert not answer_present("7 May 2023", Context.of("May 7, 2023"))
    assert not answer_present("yes", Context.of("yes, yes and yes"))
    assert Passages.split(TURN).found([TURN, "I love painting sunsets by the lake."]) is False
    assert Passages.split(TURN).found([TURN])


def _turns() -> list[PastTurn]:
    texts = [
        "I adopted a puppy named Biscuit last week.",
        "We went hiking in the Alps in July.",
        "My sister plays the violin in an orchestra.",
        "Biscuit chewed my new shoes today!",
        "I started painting landscapes recently.",
    ]
    return [PastTurn(i, f"(2023-05-0{i + 1}) Ann: {t}") for i, t in enumerate(texts)]


def test_bm25_ranks_the_turns_that_share_rare_terms_first_within_the_budget() -> None:
    turns = _turns()
    index = BM25([t.line for t in turns])
    scores = index.scores("What is the name of the puppy Biscuit?")
    assert scores[0] > scores[3] > 0 and scores[1] == scores[2] == 0
    text = bm25_context(turns, index, "puppy Biscuit", budget=len(turns[0].line) + 5)
    assert text == turns[0].line
    both = bm25_context(turns, index, "Biscuit", budget=len(turns[0].line) + len(turns[3].line) + 1)
    assert both.splitlines() == [turns[0].line, turns[3].line]  # shown in conversation order


def test_random_baseline_is_seeded_and_fills_the_budget() -> None:
    turns = _turns()
    first = random_context(turns, 120, question_number=3)
    assert first == random_context(turns, 120, question_number=3)
    assert 0 < len(first) <= 120
    sizes = {random_context(turns, 120, question_number=n) for n in range(10)}
    assert len(sizes) > 1


async def test_the_summary_cache_asks_the_model_once_per_input(tmp_path: Path) -> None:
    model = FunctionModel(lambda request: json.dumps({"n": len(model.requests)}), model="m1")
    cached = DiskCachedProvider(model, tmp_path / "cache")
    request = ProviderRequest(messages=(ChatMessage("user", "summarize this"),), max_tokens=50)

    first = await cached.generate(request)
    again = await DiskCachedProvider(model, tmp_path / "cache").generate(request)
    other = await cached.generate(
        ProviderRequest(messages=(ChatMessage("user", "something else"),), max_tokens=50)
    )

    assert len(model.requests) == 2  # the repeat (even from a new instance) came from disk
    assert again.text == first.text == '{"n": 1}' and other.text == '{"n": 2}'
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2
