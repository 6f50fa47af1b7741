"""Benchmark data files in the wrong format raise BenchDataError naming the file and line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from eko_bench.bench_embed import load_pairs as load_embed_pairs
from eko_bench.data_errors import BenchDataError
from eko_bench.guard.pairs import load_pairs as load_guard_pairs
from eko_bench.llm_quality import load_questions
from eko_bench.proactive_situations import load_situations

GOOD = '{"text_a": "How old is Ana?", "text_b": "What is Ana\'s age?", "label": 1}\n'


@pytest.mark.parametrize("loader", [load_guard_pairs, load_embed_pairs])
def test_pair_files_name_the_bad_line(tmp_path: Path, loader) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pairs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(GOOD + "\n" + '{"text_a": "a", "text_b": "b"}\n')
    with pytest.raises(BenchDataError, match=r"pairs\.jsonl\.gz:3: expected \{text_a"):
        loader(path)
    # Up to a limit before the bad line, the good lines are read.
    read = loader(path, 1)
    assert len(read if isinstance(read, list) else read[0]) == 1


@pytest.mark.parametrize("loader", [load_guard_pairs, load_embed_pairs])
def test_a_file_that_is_not_gzip_is_refused(tmp_path: Path, loader) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pairs.jsonl.gz"
    path.write_text(GOOD, encoding="utf-8")
    with pytest.raises(BenchDataError, match="cannot be read as JSON lines"):
        loader(path)


def test_a_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(GOOD + "{oops\n", encoding="utf-8")
    with pytest.raises(BenchDataError, match=r"pairs\.jsonl:2: not JSON"):
        load_guard_pairs(path)


def test_situations_and_questions_name_the_bad_line(tmp_path: Path) -> None:
    situations = tmp_path / "situations.jsonl"
    situations.write_text('{"id": "s1", "label": "maybe", "messages": []}\n', encoding="utf-8")
    with pytest.raises(BenchDataError, match=r"situations\.jsonl:1: .*label must be"):
        load_situations(situations)
    questions = tmp_path / "qa.jsonl"
    questions.write_text('{"id": "q1", "lang": "en", "question": "2+2?"}\n', encoding="utf-8")
    with pytest.raises(BenchDataError, match=r"qa\.jsonl:1: not a question line"):
        load_questions(questions)
