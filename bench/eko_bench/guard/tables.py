"""The quality tables `eko bench guard` prints (the lookup table is latency.py's)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from eko_bench.guard.judged import JudgeRun
from eko_bench.guard.metrics import Figures
from eko_bench.guard.report import QualityReport, Row

_SET_TITLES = {"data": "QQP-format file", "fr": "French set (eko_bench/data/guard_fr_pairs.jsonl)"}
# The headline is what the data itself says about every serve (any labelled file): served
# pairs labelled not-duplicate, served pairs answered by another stored question than their
# own. The hand-checked known-wrong list only recognises its own pairs: one column, last.
_COLUMNS = (
    "served",
    "served not-duplicate",
    "served another question",
    "precision",
    "recall",
    "known-wrong (hand list)",
)


def grid_table(
    report: QualityReport, name: str, splits: Sequence[str], backend: str = "sqlite"
) -> Table:
    info = report.sets[name]
    table = Table(
        title=(
            f"Memory guard on {backend}, {_SET_TITLES[name]}: threshold grid with every rule "
            f"({info['pairs']:,} pairs; excluded: {info['identical']} identical texts, "
            f"{info['exact']} asked texts stored as is, {info['refused']} refused by the guard "
            f"{_refusals(report, name)}; measured dev {info['dev']:,} / test "
            f"{info['test']:,})"
        )
    )
    table.add_column("threshold", justify="right")
    for split in splits:
        for column in _COLUMNS:
            table.add_column(f"{split} {column}", justify="right")
    for row in report.grid[name]:
        table.add_row(row.config.label, *(c for s in splits for c in _cells(row.by_split[s])))
    return table


def modes_table(report: QualityReport, splits: Sequence[str], backend: str = "sqlite") -> Table:
    chosen = ", ".join(f"{key} {value:.4g}" for key, value in sorted(report.chosen.items()))
    table = Table(
        title=(
            f"Memory guard on {backend}: the shipped modes (eko/guard/modes.py) and baselines, "
            "per set; "
            f"operating points chosen on dev: {chosen}; known-wrong list: "
            f"{report.known_wrong_size} pairs"
        )
    )
    table.add_column("set")
    table.add_column("rule", justify="left")
    for split in splits:
        for column in _COLUMNS:
            table.add_column(f"{split} {column}", justify="right")
    table.add_column("model calls / hit", justify="right")
    for row in [*report.shipped, *report.baselines]:
        table.add_row(
            row.name,
            row.config.label,
            *(c for s in splits for c in _cells(row.by_split[s])),
            "0",  # a lookup calls no model outside the judge mode's grey band
        )
    return table


def language_table(rows: Sequence[Row], backend: str = "sqlite") -> Table | None:
    """Test-split figures per language, when the set has several."""
    with_languages = [row for row in rows if row.by_language]
    if not with_languages:
        return None
    table = Table(title=f"By language, {backend} (test split; the file's `lang`, else detected)")
    table.add_column("set")
    table.add_column("rule")
    table.add_column("language")
    table.add_column("asked", justify="right")
    for column in _COLUMNS:
        table.add_column(column, justify="right")
    for row in with_languages:
        for language, figures in row.by_language.items():
            if not figures.asked:
                continue
            table.add_row(
                row.name, row.config.label, language, str(figures.asked), *_cells(figures)
            )
    return table


def judge_table(run: JudgeRun) -> Table:
    table = Table(
        title=(
            f"Judge ({run.model}) on {run.asked} grey-band candidates of the test split "
            f"(cosine in [floor, threshold), passed the rules); {run.errors} failed "
            f"(not served); median {run.median_ms:.0f} ms per call"
        )
    )
    for column in ("candidates", "n", "judge said same", "judge said different", "failed"):
        table.add_column(column, justify="left" if column == "candidates" else "right")
    for kind, counts in run.by_kind.items():
        table.add_row(kind, *(str(counts[k]) for k in ("n", "same", "different", "failed")))
    return table


def _refusals(report: QualityReport, name: str) -> str:
    codes = report.refusals.get(name) or {}
    return "(" + (", ".join(f"{code} {n}" for code, n in codes.items()) or "none") + ")"


def _cells(figures: Figures) -> list[str]:
    precision = "-" if figures.served == 0 else f"{figures.precision:.3f}"
    return [
        f"{figures.served} ({figures.served_rate:.1%})",
        f"{figures.not_duplicate} ({figures.not_duplicate_rate:.2%})",
        f"{figures.other_stored} ({figures.other_stored_rate:.2%})",
        precision,
        f"{figures.recall:.3f}",
        f"{figures.known_wrong} ({figures.known_wrong_rate:.2%})",
    ]
