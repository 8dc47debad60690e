"""Time estimates from the call cache's timings: ranges computed by hand, and what each stands on."""

from __future__ import annotations

from pathlib import Path

import pytest

from chronoprobe import cache as cache_module
from chronoprobe import estimate as estimate_module
from chronoprobe.cache import SPEED_SAMPLES_KEPT, CallCache, speed_subject
from chronoprobe.estimate import TimeEstimate, estimate, format_duration_range, load_factor, total


@pytest.fixture
def timings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CallCache:
    monkeypatch.setattr(cache_module, "_load_average", lambda: 1.0)
    monkeypatch.setattr(estimate_module, "current_load", lambda: 1.0)
    return CallCache(tmp_path / "calls.sqlite")


def test_measured_work_spans_its_batches_per_step_times(timings: CallCache) -> None:
    subject = speed_subject("smollm2")
    # 10 batches: 9 of 64 prompts at 0.1 s each, one of 64 at 0.4 s each (a busy moment)
    for _ in range(9):
        timings.add_timing(subject, 64, 6.4)
    timings.add_timing(subject, 64, 25.6)
    found = estimate(timings, "smollm2", "call", 390, default=2.0)
    mean = (9 * 6.4 + 25.6) / 640  # 0.13 s per prompt
    assert found.measured and found.defaults == () and found.loads == (1.0, 1.0)
    assert found.low == pytest.approx(390 * min(0.1, 0.8 * mean))  # the 10th percentile
    assert found.high == pytest.approx(390 * max(0.1, 1.25 * mean))  # 90 % of the steps took 0.1 s
    assert found.describe() == "about 39–63 s"
    assert "at load 1.0" in found.basis_text() and "load now 1.0" in found.basis_text()


def test_a_busier_machine_now_raises_the_high_end(timings: CallCache, monkeypatch: pytest.MonkeyPatch) -> None:
    for _ in range(3):
        timings.add_timing(speed_subject("smollm2"), 100, 10.0)  # 0.1 s per step at load 1.0
    monkeypatch.setattr(estimate_module, "current_load", lambda: 3.0)
    found = estimate(timings, "smollm2", "call", 100, default=2.0)
    assert found.low == pytest.approx(8.0)
    assert found.high == pytest.approx(12.5 * (1 + 3.0) / (1 + 1.0))
    assert "at load 1.0 (load now 3.0)" in found.basis_text()
    assert load_factor(1.0, 0.5) == 1.0 and load_factor(0.0, 10.0) == 4.0 and load_factor(None, 3.0) == 1.0


def test_one_or_two_timed_batches_give_a_wider_range(timings: CallCache) -> None:
    timings.add_timing(speed_subject("smollm2", "editing:ike"), 6, 17.4)  # 2.9 s per call, one batch
    found = estimate(timings, "smollm2", "editing:ike", 18, default=2.0)
    assert (found.low, found.high) == pytest.approx((18 * 2.9 * 0.5, 18 * 2.9 * 2.0))
    assert found.measured


def test_other_work_of_the_model_is_a_floor_and_nothing_timed_is_a_wide_default(timings: CallCache) -> None:
    timings.add_timing(speed_subject("smollm2", "call"), 10, 1.0)  # audit calls: 0.1 s each
    similar = estimate(timings, "smollm2", "editing:ike", 100, default=2.0, similar=("call",))
    assert (similar.low, similar.high) == pytest.approx((10.0, 200.0)) and similar.basis == "similar"
    rough = estimate(timings, "gemma3-270m", "edit:rome", 3, default=60.0, unit="ROME edit")
    assert (rough.low, rough.high) == pytest.approx((60.0, 720.0))
    assert rough.basis == "default" and rough.defaults == ("60 s per ROME edit",)
    assert estimate(None, "smollm2", "call", 0, default=2.0) == TimeEstimate(0.0, 0.0)


def test_a_sum_keeps_its_weakest_footing_and_every_default(timings: CallCache) -> None:
    timings.add_timing(speed_subject("smollm2"), 10, 1.0)
    measured = estimate(timings, "smollm2", "call", 10, default=2.0)
    rough = estimate(timings, "smollm2", "edit:rome", 2, default=60.0, unit="ROME edit")
    both = total([measured, rough, rough])
    assert both.low == pytest.approx(measured.low + 2 * rough.low)
    assert both.basis == "default" and both.defaults == ("60 s per ROME edit",)
    assert both.loads == (1.0, 1.0)
    assert "60 s per ROME edit" in both.basis_text() and "has not timed this model" in both.basis_text()
    assert total([]).measured and total([]).high == 0


def test_a_cache_keeps_the_latest_samples_but_the_whole_total(timings: CallCache) -> None:
    subject = speed_subject("smollm2")
    for _ in range(SPEED_SAMPLES_KEPT + 5):
        timings.add_timing(subject, 1, 0.5)
    assert len(timings.speed_samples(subject)) == SPEED_SAMPLES_KEPT
    timing = timings.timing(subject)
    assert timing is not None and timing.count == SPEED_SAMPLES_KEPT + 5


def test_durations_read_as_ranges() -> None:
    assert format_duration_range(39, 63) == "39–63 s"
    assert format_duration_range(50, 180) == "50 s – 3 min"
    assert format_duration_range(520, 6240) == "9 min – 1 h 44 min"
    assert format_duration_range(7200, 7200) == "2 h"
    assert format_duration_range(540, 1560) == "9–26 min"
