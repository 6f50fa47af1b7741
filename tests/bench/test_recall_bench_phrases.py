"""`eko bench recall` times a list question's recall with its phrases, as the server recalls
it: the phrases are written before the timing (recall_phrases.py), and a turn only a phrase
reaches is recalled with them and not without (both backends; hash embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest
from eko.store.db import Database
from eko_bench.bench_recall import builder_for, corpus_from_locomo, load_room, measure
from eko_bench.recall_embeddings import CachedEmbedder, embed_queries
from eko_bench.recall_phrases import write_phrases
from tests.bench.locomo_files import write_locomo

PLANTED = "I adopted a tortoise called Zephyrine from the Lisbon shelter."
LIST_QUESTION = "What pets does Ana have?"
SINGLE_QUESTION = "Where is the lighthouse?"
PHRASES = "I adopted a tortoise from the shelter\nMy cat sleeps all day\nI walk the dog"


def _locomo(path: Path) -> Path:
    # Every other turn shares the question's words: without phrases they outrank the planted one.
    filler = [f"Day {i}: no pets, I have boat number {i} at the harbour." for i in range(60)]
    return write_locomo(
        path,
        [*filler[:30], PLANTED, *filler[30:]],
        [
            {"question": LIST_QUESTION, "category": 1, "evidence": ["D1:31"]},
            {"question": SINGLE_QUESTION, "category": 4, "evidence": ["D1:1"]},
        ],
    )


def _phrase_model(asked: list[str]) -> FunctionModel:
    def answer(request: ProviderRequest) -> str:
        asked.append(request.messages[-1].content)
        return PHRASES

    return FunctionModel(answer, name="phrases", model="phrases")


async def test_only_list_questions_get_phrases_written_once_each(tmp_path: Path) -> None:
    asked: list[str] = []
    settings = Settings(_env_file=None)
    phrases = await write_phrases(
        [LIST_QUESTION, SINGLE_QUESTION, LIST_QUESTION],
        settings=settings,
        providers=[_phrase_model(asked)],
    )
    assert phrases == {LIST_QUESTION: PHRASES.splitlines()}
    assert len(asked) == 1 and LIST_QUESTION in asked[0]


async def test_a_model_that_fails_leaves_the_question_without_phrases() -> None:
    def down(request: ProviderRequest) -> str:
        raise ProviderUnavailable("function", "connection refused")

    phrases = await write_phrases(
        [LIST_QUESTION], settings=Settings(_env_file=None), providers=[FunctionModel(down)]
    )
    assert phrases == {LIST_QUESTION: []}


async def test_no_phrases_when_the_setting_turns_them_off() -> None:
    asked: list[str] = []
    settings = Settings(memory_recall_expand=0, _env_file=None)
    phrases = await write_phrases(
        [LIST_QUESTION], settings=settings, providers=[_phrase_model(asked)]
    )
    assert phrases == {LIST_QUESTION: []} and asked == []


@pytest.mark.parametrize("with_phrases", [False, True])
async def test_a_turn_only_a_phrase_reaches_is_recalled_with_the_phrases(
    database: Database, tmp_path: Path, with_phrases: bool
) -> None:
    corpus = corpus_from_locomo(_locomo(tmp_path / "locomo.json"), questions=10)
    # A small budget: a few hits with their neighbours, not the whole room.
    settings = Settings(database_url=database.url, memory_context_max_chars=700, _env_file=None)
    embedder = CachedEmbedder(HashEmbedder())
    asked: list[str] = []
    providers = [_phrase_model(asked)] if with_phrases else []
    phrases = await write_phrases(corpus.questions, settings=settings, providers=providers)
    await embed_queries(embedder, [p for listed in phrases.values() for p in listed])
    builder = builder_for(settings, database, embedder, providers)
    loaded = await load_room(database, builder, corpus, len(corpus.turns))
    timings = await measure(
        database, builder, settings, embedder, loaded, [LIST_QUESTION], warmup=0, phrases=phrases
    )

    recalled = " ".join(turn.text for turn in timings.recalled[0])
    assert (PLANTED in recalled) is with_phrases
    assert len(timings.ms["recall"]) == 1 and len(timings.ms["build"]) == 1
    # The builder's own build asked for the phrases too, as the server does: once per build.
    assert len(asked) == (2 if with_phrases else 0)
