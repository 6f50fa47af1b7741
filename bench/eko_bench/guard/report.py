"""Answer quality, step 3: the threshold grid, the operating points chosen on dev, the shipped
modes and the baselines, each on dev and test (tables.py prints them)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from eko.config.guard import GuardMode
from eko.guard.check import BASE_RULES, RULES
from eko.guard.modes import GuardPolicy
from eko_bench.guard.metrics import Config, Figures, figures, lowest_threshold, measured
from eko_bench.guard.quality import Asked

EN_GRID = tuple(round(float(t), 4) for t in np.arange(0.95, 0.9951, 0.0025))
FR_GRID = tuple(round(float(t), 3) for t in np.arange(0.88, 0.9801, 0.01))
# Dev known-wrong bound of the balanced point: the 0.5% (and every higher threshold
# of the grid within it too, so the choice is not a lucky dip); strict: none at all.
BALANCED_MAX_KNOWN_WRONG = 0.005
# When no known-wrong serve is left at the balanced point already, strict is this much higher.
STRICT_MARGIN = 0.005
SPLITS = ("dev", "test")


@dataclass
class Row:
    """One config measured on both splits (and per language when the file has several)."""

    name: str  # the set: "data" (the QQP-format file) or "fr"
    config: Config
    by_split: dict[str, Figures]
    by_language: dict[str, Figures] = field(default_factory=dict)


@dataclass
class QualityReport:
    # per set: pairs, identical, exact, refused (skipped), measured per split
    sets: dict[str, dict[str, int]]
    grid: dict[str, list[Row]]  # per set
    chosen: dict[str, float]  # "<set>.<mode>" -> threshold chosen on dev
    shipped: list[Row]  # the modes as shipped (modes.py), per set
    baselines: list[Row]
    known_wrong_size: int
    refusals: dict[str, dict[str, int]] = field(default_factory=dict)  # per set: code -> pairs


def run_report(
    asked: Mapping[str, list[Asked]],
    known_wrong: frozenset[tuple[str, str]],
    policies: Mapping[GuardMode, GuardPolicy],
) -> QualityReport:
    """`asked` per set ("data" = the QQP-format file, "fr" = the French set)."""
    sets: dict[str, dict[str, int]] = {}
    kept: dict[str, list[Asked]] = {}
    for name, items in asked.items():
        kept[name] = measured(items)
        sets[name] = {
            "pairs": len(items),
            "identical": sum(a.pair.identical for a in items),
            "exact": sum(a.exact is not None and not a.pair.identical for a in items),
            "refused": sum(a.refused is not None for a in items),
            **{s: sum(a.pair.split == s for a in kept[name]) for s in SPLITS},
        }

    def measure(name: str, config: Config) -> Row:
        clean = name == "fr"
        split_rows = {
            s: figures(
                [a for a in kept[name] if a.pair.split == s],
                config,
                known_wrong=known_wrong,
                clean_labels=clean,
            )
            for s in SPLITS
        }
        languages = sorted({a.language for a in kept[name]})
        by_language = {}
        if len(languages) > 1:
            by_language = {
                lang: figures(
                    [a for a in kept[name] if a.language == lang and a.pair.split == "test"],
                    config,
                    known_wrong=known_wrong,
                    clean_labels=clean,
                )
                for lang in languages
            }
        return Row(name, config, split_rows, by_language)

    grid: dict[str, list[Row]] = {}
    chosen: dict[str, float] = {}
    for name in kept:
        values = FR_GRID if name == "fr" else EN_GRID
        rows = [measure(name, Config(f"{t:.4g}", {"und": t})) for t in values]
        grid[name] = rows
        by_threshold = {row.config.thresholds["und"]: row.by_split["dev"] for row in rows}
        balanced = lowest_threshold(
            values,
            by_threshold.__getitem__,
            max_known_wrong_rate=0.0 if name == "fr" else BALANCED_MAX_KNOWN_WRONG,
        )
        strict = lowest_threshold(values, by_threshold.__getitem__, max_known_wrong_rate=0.0)
        chosen[f"{name}.balanced"] = balanced
        chosen[f"{name}.strict"] = (
            strict if strict > balanced else round(min(balanced + STRICT_MARGIN, 1.0), 4)
        )
    shipped = [
        measure(name, _policy_config(mode, policy))
        for name in kept
        for mode, policy in policies.items()
    ]
    baselines = [
        measure(name, config)
        for name in kept
        for config in (
            Config("always serve the nearest", {"und": -1.0}, rules=None, same_language=False),
            Config("exact text only", {"und": 2.0}, rules=None, same_language=False),
            Config(
                "before issue 17: 0.972 + check",
                {"und": 0.972},
                rules=BASE_RULES,
                same_language=False,
            ),
            Config("0.972 + verifier rules", {"und": 0.972}, rules=RULES),
        )
    ]
    refusals = {
        name: dict(Counter(a.refused for a in items if a.refused is not None).most_common())
        for name, items in asked.items()
    }
    return QualityReport(sets, grid, chosen, shipped, baselines, len(known_wrong), refusals)


def _policy_config(mode: str, policy: GuardPolicy) -> Config:
    return Config(f"mode {mode}", dict(policy.thresholds), rules=RULES)
