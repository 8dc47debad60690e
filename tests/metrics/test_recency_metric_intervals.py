"""Intervals for the recency metrics: the vectorised bootstrap F1 equals the plain F1 on each resample."""

from __future__ import annotations

import numpy as np
import pytest

from chronoprobe.metrics import recency as m
from chronoprobe.metrics.uncertainty import wilson


def _sample(seed: int, n: int = 40) -> tuple[list[int], list[int | None]]:
    rng = np.random.default_rng(seed)
    gold = [int(g) for g in rng.integers(0, 12, size=n)]
    pred: list[int | None] = [
        None if rng.random() < 0.15 else min(11, max(0, g + int(rng.integers(-2, 3)))) for g in gold
    ]
    return gold, pred


def test_vectorised_resample_f1_equals_macro_f1_of_each_resample() -> None:
    gold, pred = _sample(1)
    codes = np.array([g * 13 + (12 if p is None else p) for g, p in zip(gold, pred, strict=True)])
    idx = np.random.default_rng(0).integers(0, len(gold), size=(25, len(gold)))
    fast = m._macro_f1_of_resamples(codes, idx, 12)
    slow = [m.macro_f1([gold[i] for i in row], [pred[i] for i in row]) for row in idx]
    assert fast == pytest.approx(slow, abs=1e-12)


def test_classification_estimates() -> None:
    gold, pred = _sample(2)
    summary = m.classification_summary(gold, pred)
    est = m.classification_estimates(gold, pred)
    for key in ("accuracy", "tolerant_accuracy", "macro_f1", "tolerant_f1", "unparseable_rate"):
        assert est[key]["value"] == summary[key] and est[key]["n"] == len(gold)
        assert est[key]["ci_low"] <= summary[key] <= est[key]["ci_high"]
    hits = sum(p == g for g, p in zip(gold, pred, strict=True))
    assert est["accuracy"] == wilson(hits, len(gold)).to_json()
    assert est["macro_f1"]["method"] == "bootstrap"
    assert m.classification_estimates(gold, pred) == est  # seeded: reruns give identical numbers


def test_estimates_of_an_empty_set() -> None:
    est = m.classification_estimates([], [])
    assert all(e["value"] is None and e["n"] == 0 for e in est.values())
