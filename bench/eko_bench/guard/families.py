"""The guard's trap and paraphrase families (issue 36): one table per file, per family and
language, with the baselines in the same run.

A families file is JSON lines `{family, lang, label, text_a, text_b}`: `text_a` is stored,
`text_b` asked, label 0 = a different question (a trap: serving it is a wrong serve), 1 = the
same question (a paraphrase: serving it is right). Each pair is judged alone, as if `text_a`
were the only stored question: the cosine of the two (the configured embedder, as queries,
like the guard), the mode's threshold for the asked question's language, the language gate
and the false-hit check, exactly as `GuardService.lookup` decides (eko.guard.decide).

The shipped files: bench/eko_bench/data/guard_families.jsonl (dev: the rules were tuned on
it) and guard_families_test.jsonl (held out: written before the tuning, never tuned on).
`eko bench guard --families PATH` runs any file of the same format.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from eko.guard.check import false_hit_check
from eko.guard.decide import Candidate, decide
from eko.guard.language import detect_language, serves_language
from eko.guard.modes import GuardPolicy
from eko.guard.normalize import normalize_question
from eko.guard.rules import is_deictic
from eko_bench.data_errors import BenchDataError, json_lines
from eko_bench.guard.pairs import BUNDLED_DATA, CachedEmbedder

FAMILIES_DEV = BUNDLED_DATA / "guard_families.jsonl"
FAMILIES_TEST = BUNDLED_DATA / "guard_families_test.jsonl"
DEFAULT_FAMILIES = (FAMILIES_DEV, FAMILIES_TEST)
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class FamilyPair:
    family: str
    lang: str
    label: int  # 1 = the same question (paraphrase), 0 = a different one (trap)
    text_a: str  # stored
    text_b: str  # asked


def load_families(path: Path) -> list[FamilyPair]:
    pairs = []
    for number, row in json_lines(path):
        try:
            pairs.append(
                FamilyPair(
                    str(row["family"]),
                    str(row["lang"]),
                    int(row["label"]),
                    str(row["text_a"]),
                    str(row["text_b"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise BenchDataError(
                f"{path}:{number}: expected {{family, lang, label, text_a, text_b}} ({exc!r})"
            ) from exc
    return pairs


@dataclass
class Cell:
    """What one rule served of one family's pairs."""

    traps: int = 0
    wrong: int = 0  # traps served
    paraphrases: int = 0
    right: int = 0  # paraphrases served

    def add(self, label: int, served: bool) -> None:
        if label == 0:
            self.traps += 1
            self.wrong += served
        else:
            self.paraphrases += 1
            self.right += served

    def text(self) -> str:
        return f"{self.wrong}/{self.traps} · {self.right}/{self.paraphrases}"


def served_by_policy(pair: FamilyPair, score: float, policy: GuardPolicy | None) -> bool:
    """The lookup's decision for this pair alone; `policy` None = the check only (no cosine)."""
    question = pair.text_b
    if normalize_question(question) == normalize_question(pair.text_a):
        return True  # the exact key
    if is_deictic(question):
        return False
    if not serves_language(detect_language(question), pair.text_a):
        return False
    threshold = -1.0 if policy is None else policy.threshold(detect_language(question))
    candidate = Candidate(pair.text_a, pair.text_a, score, _EPOCH)
    decision = decide(question, [candidate], threshold=threshold, check=false_hit_check)
    return decision.served is not None


def _baseline(name: str, pair: FamilyPair) -> bool:
    if name == "always serve the nearest":
        return True
    return normalize_question(pair.text_a) == normalize_question(pair.text_b)


BASELINES = ("always serve the nearest", "exact text only")


@dataclass
class FamilyRun:
    path: Path
    columns: list[str]
    cells: dict[tuple[str, str], dict[str, Cell]]  # (family, lang) -> column -> cell
    totals: dict[str, dict[str, Cell]]  # lang -> column -> cell


async def run_families(
    path: Path, embedder: CachedEmbedder, policies: Mapping[str, GuardPolicy]
) -> FamilyRun:
    pairs = load_families(path)
    texts = [t for p in pairs for t in (p.text_a, p.text_b)]
    await embedder.warm(texts)
    vectors = await embedder.embed(texts)
    scores = [float(np.dot(vectors[2 * i], vectors[2 * i + 1])) for i in range(len(pairs))]
    rules = {
        **{name: partial(_baseline, name) for name in BASELINES},
        "check only (any cosine)": None,
        **{f"mode {mode}": policy for mode, policy in policies.items()},
    }
    columns = list(rules)
    cells: dict[tuple[str, str], dict[str, Cell]] = {}
    totals: dict[str, dict[str, Cell]] = {}
    for pair, score in zip(pairs, scores, strict=True):
        row = cells.setdefault((pair.family, pair.lang), {c: Cell() for c in columns})
        total = totals.setdefault(pair.lang, {c: Cell() for c in columns})
        for column, rule in rules.items():
            served = rule(pair) if callable(rule) else served_by_policy(pair, score, rule)
            row[column].add(pair.label, served)
            total[column].add(pair.label, served)
    return FamilyRun(path, columns, cells, totals)


def families_table(run: FamilyRun) -> Table:
    table = Table(
        title=(
            f"Memory guard families, {run.path.name}: wrong serves (traps served / traps) · "
            "paraphrases served / paraphrases, each pair alone (its text_a the only stored "
            "question)"
        )
    )
    table.add_column("family")
    table.add_column("lang")
    for column in run.columns:
        table.add_column(column, justify="right")
    for (family, lang), row in sorted(run.cells.items()):
        table.add_row(family, lang, *(row[c].text() for c in run.columns))
    for lang, row in sorted(run.totals.items()):
        table.add_row("[b]all[/b]", lang, *(f"[b]{row[c].text()}[/b]" for c in run.columns))
    return table


async def print_families(
    console: Console,
    embedder: CachedEmbedder,
    policies: Mapping[str, GuardPolicy],
    paths: Sequence[Path],
) -> list[FamilyRun]:
    runs = []
    for path in paths:
        run = await run_families(path, embedder, policies)
        console.print(families_table(run))
        runs.append(run)
        console.print(f"[dim]{check_cost_line(load_families(path))}[/dim]")
    return runs


def check_cost_line(pairs: Sequence[FamilyPair], rounds: int = 5) -> str:
    """The false-hit check's cost per candidate on these pairs (best of `rounds`; the
    stored side made unique each round, so no cache of folded words answers it)."""
    best = float("inf")
    for round_ in range(rounds):
        started = time.perf_counter()
        for index, pair in enumerate(pairs):
            false_hit_check(pair.text_b, f"{pair.text_a} {round_}-{index}")
        best = min(best, (time.perf_counter() - started) / max(len(pairs), 1))
    return f"false-hit check: {best * 1000:.3f} ms per candidate (best of {rounds} rounds)"
