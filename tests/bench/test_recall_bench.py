"""`eko bench recall` on a tiny room: every part is timed and the recall finds a planted turn
(both backends; the hash embedder stands in for the real one)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.store.db import Database
from eko_bench.bench_recall import builder_for, corpus_from_locomo, load_room, measure, row_counts
from eko_bench.recall_embeddings import CachedEmbedder, embed_passages, embed_queries
from eko_bench.recall_results import COLUMNS, table
from tests.bench.locomo_files import write_locomo

PLANTED = "I adopted a tortoise called Zephyrine from the Lisbon shelter."
FILLER = [
    "How was your weekend?",
    "Pretty quiet, I read a book about sailing.",
    "That sounds relaxing, which book?",
    "A memoir by an old captain, lovely pictures.",
]


def _locomo(path: Path) -> Path:
    return write_locomo(
        path,
        [*FILLER, PLANTED, *FILLER],
        [
            {"question": "What is the name of the tortoise?", "category": 1, "evidence": ["D1:5"]},
            {"question": "Which book about sailing?", "category": 1, "evidence": ["D1:2"]},
            {"question": "Is this adversarial?", "category": 5, "evidence": []},
        ],
    )


async def test_the_bench_times_every_part_and_recalls_a_planted_turn(
    database: Database, tmp_path: Path
) -> None:
    corpus = corpus_from_locomo(_locomo(tmp_path / "locomo.json"), questions=10)
    assert corpus.questions == ["What is the name of the tortoise?", "Which book about sailing?"]
    settings = Settings(database_url=database.url, _env_file=None)
    embedder = CachedEmbedder(HashEmbedder())
    distinct = list(dict.fromkeys(turn.text for turn in corpus.turns))
    assert (await embed_passages(embedder, distinct, tmp_path / "cache")).startswith("cached")
    assert (await embed_passages(embedder, distinct, tmp_path / "cache")).startswith("read")

    assert len(await embed_queries(embedder, corpus.questions)) == 2
    builder = builder_for(settings, database, embedder)
    # 3 cycles of the 9 turns (+3): the planted turn is at seq 5, 14 and 23, a year apart.
    loaded = await load_room(database, builder, corpus, 30)
    assert await row_counts(database, loaded.room.id, embedder.name) == (30, 30)
    timings = await measure(
        database, builder, settings, embedder, loaded, corpus.questions, warmup=1
    )

    assert set(timings.ms) == set(COLUMNS)
    assert all(len(values) == 2 and min(values) >= 0 for values in timings.ms.values())
    assert max(timings.ms["build"]) > 0
    tortoise = timings.recalled[0]
    assert any(PLANTED in turn.text for turn in tortoise)
    assert {turn.when.year for turn in tortoise if PLANTED in turn.text} >= {2023, 2024}

    console = Console(record=True, width=240)
    console.print(table([timings], embedder.name))
    rendered = console.export_text()
    assert database.dialect in rendered and "30" in rendered
