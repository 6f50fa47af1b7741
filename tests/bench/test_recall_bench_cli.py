"""`eko bench recall` (and `context`) from the CLI: a bad --expander is refused before any
work, and with the bundled model a list question's phrases are written once, then read from
the bench's cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko_bench import cli as bench
from tests.bench.locomo_files import write_locomo


def _locomo(path: Path) -> Path:
    return write_locomo(
        path,
        [
            "How was your weekend?",
            "We went camping by the lake with the kids.",
            "Lovely! I spent mine painting a sunrise.",
            "I also signed up for a pottery class.",
        ],
        [
            {"question": "What activities does Ben do?", "category": 1, "evidence": ["D1:2"]},
            {"question": "Where did Ben go camping?", "category": 4, "evidence": ["D1:2"]},
        ],
    )


@pytest.mark.parametrize("suite", ["context", "recall"])
def test_an_unknown_expander_is_refused(tmp_path: Path, suite: str) -> None:
    data = _locomo(tmp_path / "locomo.json")
    result = CliRunner().invoke(bench.app, [suite, "--data", str(data), "--expander", "gpt"])
    assert result.exit_code == 1
    assert "unknown expander 'gpt'" in " ".join(result.output.split())


@pytest.mark.slow
def test_the_model_writes_a_list_questions_phrases_once_then_reads_its_cache(
    tmp_path: Path,
) -> None:
    data = _locomo(tmp_path / "locomo.json")
    env = {"EKO_HOME": str(tmp_path / "home"), "COLUMNS": "240"}
    args = ["recall", "--data", str(data), "--turns", "40", "--questions", "2"]
    args += ["--backend", "sqlite"]

    first = CliRunner().invoke(bench.app, args, env=env)
    second = CliRunner().invoke(bench.app, args, env=env)

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    first_text, second_text = " ".join(first.output.split()), " ".join(second.output.split())
    # One of the two questions is a list question: the model is asked once, before the
    # timing; the builder's own build then reads the cached answer for it, per timed run.
    assert "phrases: 1 of 2 questions need several pieces, 1 got phrases" in first_text
    assert "0 answers reused, 1 asked to the model; model time" in first_text
    assert "1 answers reused, 0 asked to the model" in second_text
    assert "recall p50/p95/p99" in first_text and "sqlite" in first_text
    assert list((tmp_path / "home" / "bench-cache" / "expansions").glob("*.json"))
