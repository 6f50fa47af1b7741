"""The threshold calibration metrics behind each embedder's calibrated_threshold."""

from __future__ import annotations

import numpy as np
import pytest

from eko_bench.bench_embed import calibrate


def test_perfectly_separated_scores() -> None:
    scores = np.array([0.99, 0.97, 0.95, 0.80, 0.70, 0.60])
    labels = np.array([1, 1, 1, 0, 0, 0])
    result = calibrate(scores, labels)
    assert result.auc == pytest.approx(1.0)
    assert result.best_f1 == pytest.approx(1.0)
    assert result.best_f1_threshold == pytest.approx(0.95)
    assert result.safe_threshold == pytest.approx(0.95)
    assert (result.safe_precision, result.safe_recall) == (1.0, 1.0)


def test_false_hit_bound_picks_a_stricter_threshold() -> None:
    # 20 non-duplicates spread over 0.50..0.88 plus one at 0.96; duplicates at 0.90..0.99.
    negatives = np.r_[np.linspace(0.50, 0.88, 19), 0.96]
    positives = np.linspace(0.90, 0.99, 10)
    scores = np.r_[positives, negatives]
    labels = np.r_[np.ones(10), np.zeros(20)].astype(np.int8)
    result = calibrate(scores, labels, max_false_hit=0.05)
    # One false hit out of 20 negatives is exactly 5%: allowed, so 0.90 stays reachable.
    assert result.safe_threshold == pytest.approx(0.90)
    strict = calibrate(scores, labels, max_false_hit=0.0)
    assert strict.safe_threshold > 0.96
    assert 0.9 < result.auc < 1.0
