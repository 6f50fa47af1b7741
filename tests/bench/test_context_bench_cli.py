"""`eko bench context` end to end on a tiny LoCoMo file: the real embedder, each backend, the
CLI's table and its per-question report; and bad data files refused with a message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from eko.cli.common import console
from eko_bench import cli as bench

FILLER = [
    "How was your weekend?",
    "Pretty quiet, I read a book about sailing.",
    "That sounds relaxing, which book?",
    "A memoir by an old captain, lovely pictures.",
    "Did you cook anything nice?",
    "Just pasta, nothing fancy this time.",
]


def _conversation(sample_id: str, a: str, b: str, planted: str, question: str) -> dict:
    def session(number: int, texts: list[str]) -> list[dict[str, str]]:
        return [
            {"speaker": (a, b)[i % 2], "dia_id": f"D{number}:{i + 1}", "text": text}
            for i, text in enumerate(texts)
        ]

    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": a,
            "speaker_b": b,
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": session(1, [*FILLER[:4], planted, *FILLER[4:]]),
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": session(2, FILLER * 3),
        },
        "qa": [
            {"question": question, "answer": "", "category": 4, "evidence": ["D1:5"]},
            {"question": "What did they never mention?", "category": 5, "evidence": []},
        ],
    }


def _locomo(path: Path) -> Path:
    samples = [
        _conversation(
            "conv-x",
            "Ana",
            "Ben",
            "I adopted a tortoise called Zephyrine from the Lisbon shelter.",
            "What is the name of the tortoise Ana adopted from the shelter?",
        ),
        _conversation(
            "conv-y",
            "Cleo",
            "Dan",
            "My violin teacher Ottoline moved to Reykjavik last winter.",
            "Where did Cleo's violin teacher move to?",
        ),
    ]
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_bench_scores_each_question_and_reports_it(tmp_path: Path, backend: str) -> None:
    report = tmp_path / "report.jsonl"
    result = CliRunner().invoke(
        bench.app,
        [
            "context",
            "--data",
            str(_locomo(tmp_path / "locomo.json")),
            "--budget",
            "1500",
            "--backend",
            backend,
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Content recall on LoCoMo" in result.output and "per-question report" in result.output
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    # The adversarial questions are not scored: one line per conversation's real question.
    assert [line["conversation"] for line in lines] == ["conv-x", "conv-y"]
    for line in lines:
        assert {
            "random turns (same-conversation control), 1,500 budget",
            "BM25 turns, 1,500 budget",
            "mem0 (raw), 1,500 budget",  # the peer, same budget (no extraction: no model)
        } <= set(line["found"])
        assert line["evidence"] == ["D1:5"] and line["category"] == 4
        # The planted turn is two sessions back, far outside the recent turns...
        assert line["found"]["recent only"] is False
        # ...and Eko's context, within the budget, recalls it.
        assert line["found"]["eko without facts, 1,500 budget"] is True
        assert line["chars"]["eko without facts, 1,500 budget"] <= 1500
        # mem0 over the same turns with the same embedder finds it too, within the budget.
        assert line["found"]["mem0 (raw), 1,500 budget"] is True
        assert line["chars"]["mem0 (raw), 1,500 budget"] <= 1500
    assert "mem0 (raw): 50 turns stored in 50 add calls" in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json", "not a LoCoMo JSON file"),
        ('{"sample_id": "x"}', "expected a JSON list of conversations"),
        ('[{"sample_id": "conv-z", "qa": []}]', "conversation #1 (conv-z)"),
        (
            '[{"sample_id": "conv-z", "qa": [], "conversation": {"speaker_a": "A", '
            '"speaker_b": "B", "session_1_date_time": "yesterday", "session_1": [{}]}}]',
            "conversation #1 (conv-z) is not in LoCoMo's format",
        ),
    ],
)
def test_a_file_not_in_locomo_format_is_refused_with_a_message(
    tmp_path: Path, content: str, said: str
) -> None:
    data = tmp_path / "broken.json"
    data.write_text(content, encoding="utf-8")
    report = tmp_path / "report.jsonl"
    result = CliRunner().invoke(
        bench.app, ["context", "--data", str(data), "--report", str(report)]
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())  # the console wraps long lines
    assert "bad data file" in output and said in output and str(data) in output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not report.exists()


def test_a_report_without_its_directory_fails_before_measuring(tmp_path: Path) -> None:
    data = _locomo(tmp_path / "locomo.json")
    result = CliRunner().invoke(
        bench.app, ["context", "--data", str(data), "--report", str(tmp_path / "no" / "r.jsonl")]
    )
    assert result.exit_code == 1
    assert "no directory for the report" in " ".join(result.output.split())


@pytest.mark.slow
def test_the_model_expander_asks_once_per_list_question_then_reads_its_cache(
    tmp_path: Path,
) -> None:
    samples = json.loads(_locomo(tmp_path / "locomo.json").read_text(encoding="utf-8"))
    samples[0]["qa"].append(
        {"question": "What books has Ben read?", "answer": "", "category": 1, "evidence": ["D1:2"]}
    )
    data = tmp_path / "with-list.json"
    data.write_text(json.dumps(samples), encoding="utf-8")
    env = {"EKO_HOME": str(tmp_path / "home")}
    args = ["context", "--data", str(data), "--budget", "1500", "--expander", "model"]

    first = CliRunner().invoke(bench.app, args, env=env)
    second = CliRunner().invoke(bench.app, args, env=env)

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    # One list question, asked by the two scored contexts at 1,500 (with and without facts):
    # the model once, then its cached answer; the second run only reads the cache.
    assert "phrase cache: 1 answers reused, 1 asked to the model; model time" in first.output
    assert "phrase cache: 2 answers reused, 0 asked to the model\n" in second.output
    assert "list questions' phrases by the configured model" in " ".join(first.output.split())
    assert list((tmp_path / "home" / "bench-cache" / "expansions").glob("*.json"))


@pytest.fixture
def wide_console() -> Iterator[None]:
    """The table's rows whole (the CLI's console is 80 columns wide under CliRunner)."""
    width = console._width
    console.width = 400
    yield
    console._width = width


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.usefixtures("wide_console")
def test_provider_budget_scores_the_prompt_the_product_renders(
    tmp_path: Path, backend: str
) -> None:
    """Remote readers (no model: a budget declared, tokens counted as the product sizes text):
    the writer's prompt is rendered by the product for each question and scored strictly."""
    report = tmp_path / "report.jsonl"
    result = CliRunner().invoke(
        bench.app,
        [
            "context",
            "--data",
            str(_locomo(tmp_path / "locomo.json")),
            "--provider-budget",
            "3000",
            "--provider-budget",
            "1200",
            "--backend",
            backend,
            "--report",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "in the prompt the model receives" in output
    for reader in ("remote 3,000 tokens", "remote 1,200 tokens"):
        # The same-conversation control and the unrelated one, in every run.
        assert f"random turns (same-conversation control), {reader}" in output
        assert f"unrelated (control), {reader}" in output
    assert "evidence memory selected but the budget cut: 0 questions" in output
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert [line["conversation"] for line in lines] == ["conv-x", "conv-y"]
    for line in lines:
        # The planted turn (two sessions back) reaches the prompt at both budgets: under 2,048
        # tokens the writer's instructions are the compact ones, and the recent window may
        # take at most half of what they leave (eko/memory/budget.py), so memory always gets
        # room (before that rule, 1,200 tokens left memory nothing).
        assert line["found"]["eko prompt, remote 3,000 tokens"] is True
        assert line["found"]["eko prompt, remote 1,200 tokens"] is True
        assert line["evidence_cut"] == {"remote 3,000 tokens": False, "remote 1,200 tokens": False}
        assert (
            line["chars"]["BM25 turns, remote 3,000 tokens"]
            <= (line["chars"]["eko prompt, remote 3,000 tokens"])
        )


@pytest.mark.parametrize("value", ["lots", "100"])
def test_a_bad_provider_budget_is_refused_before_measuring(tmp_path: Path, value: str) -> None:
    data = _locomo(tmp_path / "locomo.json")
    result = CliRunner().invoke(
        bench.app, ["context", "--data", str(data), "--provider-budget", value]
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "bad --provider-budget" in output and "LoCoMo" not in output


def test_bad_data_is_refused_with_a_message_when_scoring_prompts(tmp_path: Path) -> None:
    data = tmp_path / "broken.json"
    data.write_text('{"sample_id": "x"}', encoding="utf-8")
    result = CliRunner().invoke(
        bench.app, ["context", "--data", str(data), "--provider-budget", "local"]
    )
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "bad data file" in output and "expected a JSON list of conversations" in output
