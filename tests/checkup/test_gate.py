"""``check --require``: parsing thresholds against the lenses' metric names, and judging them on intervals."""

from __future__ import annotations

import pytest

from chronoprobe.checkup.thresholds import judge, judge_all, parse_threshold
from chronoprobe.contract.check_part import check_part
from chronoprobe.contract.lens import lens_class
from chronoprobe.errors import ConfigError
from chronoprobe.records.runlog import Metric, Run, Summary

PATTERNS = {
    name: check_part(lens_class(name)).metric_patterns for name in ("outdated", "conflicts", "recency", "editing")
}


def metric(value: float | None, low: float | None, high: float | None, name: str = "m", unit: str = "%") -> Metric:
    return Metric(model="x", group="all", name=name, value=value, n=50, ci_low=low, ci_high=high, unit=unit)


@pytest.mark.parametrize(
    ("text", "lens", "name", "group", "op", "value"),
    [
        (
            "outdated.soft_constraint_pct.up-to-date >= 40",
            "outdated",
            "soft_constraint_pct.up-to-date",
            "all",
            ">=",
            40.0,
        ),
        (
            "outdated.soft_constraint_pct.outdated.Politicians<10%",
            "outdated",
            "soft_constraint_pct.outdated",
            "Politicians",
            "<",
            10.0,
        ),
        ("outdated.knowledge_date >= 2023-01", "outdated", "knowledge_date", "all", ">=", 2023.0),
        ("outdated.knowledge_date > 2021-07", "outdated", "knowledge_date", "all", ">", 2021.5),
        ("outdated.knowledge_horizon >= 2022-01", "outdated", "knowledge_horizon", "all", ">=", 2022.0),
        ("outdated.knowledge_cutoff >= 2022-01", "outdated", "knowledge_cutoff", "all", ">=", 2022.0),
        (
            "outdated.current_among_dated_pct.countries_byGDP >= 40",
            "outdated",
            "current_among_dated_pct",
            "countries_byGDP",
            ">=",
            40.0,
        ),
        ("outdated.dated_pct >= 20", "outdated", "dated_pct", "all", ">=", 20.0),
        ("outdated.claimed_cutoff < 2025", "outdated", "claimed_cutoff", "all", "<", 2025.0),
        ("conflicts.cp.temporal <= 3.5", "conflicts", "cp", "temporal", "<=", 3.5),
        ("recency.zero-shot.without.accuracy >= 10%", "recency", "zero-shot.without.accuracy", "all", ">=", 0.1),
        (
            "recency.zero-shot.rl1_accuracy.Non-Stationary > 0.2",
            "recency",
            "zero-shot.rl1_accuracy",
            "Non-Stationary",
            ">",
            0.2,
        ),
        ("editing.rag-gold.harmonic_mean_pct > 50", "editing", "rag-gold.harmonic_mean_pct", "all", ">", 50.0),
    ],
)
def test_thresholds_read_as_the_results_table_names_them(text, lens, name, group, op, value) -> None:
    threshold = parse_threshold(text, PATTERNS)
    assert (threshold.lens, threshold.metric, threshold.group, threshold.op) == (lens, name, group, op)
    assert threshold.value == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("outdated.soft_constraint_pct.up-to-date = 40", "is not LENS.METRIC[.CLASS] OP VALUE"),
        ("outdated.soft_constraint_pct.up-to-date >=", "is not LENS.METRIC[.CLASS] OP VALUE"),
        ("soft_constraint_pct >= 40", "'soft_constraint_pct' is not a lens this check runs"),
        ("outdated >= 40", "names no metric after 'outdated'"),
        (
            "outdated.soft_constraint >= 40",
            "'soft_constraint' is not a metric of the outdated lens; its metrics: soft_constraint_pct.<…>",
        ),
        ("outdated.soft_constraint_pct.up-to-date >= forty", "'forty' is not a number"),
        ("outdated.knowledge_date >= 2023-13", "'2023-13' is not a date"),
        ("conflicts.cp.temporal >= 10%", "cp is not a percentage"),
    ],
)
def test_a_bad_threshold_is_one_line_naming_it(text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_threshold(text, PATTERNS)
    assert caught.value.where == f"--require {text!r}"
    assert problem in caught.value.problem


def test_a_threshold_fails_only_when_the_whole_interval_misses_it() -> None:
    at_least = parse_threshold("outdated.soft_constraint_pct.up-to-date >= 40", PATTERNS)
    at_most = parse_threshold("outdated.soft_constraint_pct.outdated <= 10", PATTERNS)
    # point 35 below 40, but the interval reaches 45: holds; strict compares 35 and fails
    straddling = metric(35.0, 28.0, 45.0)
    assert judge(at_least, straddling, "x").passed
    assert not judge(at_least, straddling, "x", strict=True).passed
    assert not judge(at_least, metric(35.0, 28.0, 39.9), "x").passed  # the whole interval is below
    assert judge(at_most, metric(12.0, 9.0, 16.0), "x").passed
    assert not judge(at_most, metric(12.0, 10.5, 16.0), "x").passed
    assert judge(at_least, metric(41.0, None, None), "x").why == "point"  # no interval: the point value
    missing = judge(at_least, None, "x")
    assert not missing.passed and missing.line().endswith("not measured in this run; fails")


def test_strict_bounds_and_the_failure_line() -> None:
    above = parse_threshold("outdated.soft_constraint_pct.up-to-date > 40", PATTERNS)
    assert not judge(above, metric(30.0, 25.0, 40.0), "smollm2").passed  # > 40 needs more than the upper end 40
    line = judge(above, metric(30.0, 25.0, 35.0), "smollm2").line()
    assert line == (
        "outdated.soft_constraint_pct.up-to-date > 40 (smollm2): 30.0% (95% CI 25.0–35.0%, n=50); "
        "threshold > 40: fails; the whole 95% interval is on the wrong side"
    )
    date = parse_threshold("outdated.knowledge_date >= 2023", PATTERNS)
    shown = judge(date, metric(2021.75, 2007.1, 2022.2, "knowledge_date", "year"), "smollm2").line()
    assert "2021-10 (95% CI 2007-02 to 2022-03, n=50); threshold >= 2023 (2023-01): fails" in shown


def test_every_model_of_the_lens_is_judged() -> None:
    summary = Summary(
        lens="outdated",
        models=["a", "b"],
        headline={},
        metrics=[
            Metric(model=k, group="all", name="inconsistency_pct", value=v, n=9, ci_low=v - 1, ci_high=v + 1, unit="%")
            for k, v in (("a", 5.0), ("b", 50.0))
        ],
        names={"a": "first"},
    )
    threshold = parse_threshold("outdated.inconsistency_pct < 20", PATTERNS)
    results = judge_all([threshold], {"outdated": summary})
    assert [(r.model, r.passed) for r in results] == [("first", True), ("b", False)]


def test_the_ci_examples_thresholds_parse() -> None:
    """examples/ci's workflow and cron job give thresholds the check accepts (a typo would fail every build)."""
    import re
    from pathlib import Path

    import yaml  # type: ignore[import-untyped]  # no stubs installed; pyyaml comes with transformers

    ci = Path(__file__).resolve().parents[2] / "examples" / "ci"
    workflow = yaml.safe_load((ci / "chronoprobe-check.yml").read_text())
    [step] = [s for s in workflow["jobs"]["check"]["steps"] if s.get("name") == "chronoprobe check"]
    found = re.findall(r"--require '([^']+)'", step["run"]) + re.findall(
        r"--require '([^']+)'", (ci / "cron.sh").read_text()
    )
    assert len(found) == 5
    for text in found:
        parse_threshold(text, PATTERNS)


def test_a_threshold_on_a_lens_that_measured_nothing_fails() -> None:
    threshold = parse_threshold("recency.zero-shot.without.accuracy >= 0.1", PATTERNS)
    [result] = judge_all([threshold], {}, names={"smollm2": "smollm2"})
    assert not result.passed and result.line() == (
        "recency.zero-shot.without.accuracy >= 0.1 (smollm2): not measured in this run; fails"
    )


def test_a_thousand_thresholds_parse_judge_and_write_as_one_junit_file(tmp_path) -> None:
    from junitparser import JUnitXml

    from chronoprobe.checkup.junit import write_junit

    texts = [f"outdated.soft_constraint_pct.up-to-date.cat{i % 7} >= {i % 100}" for i in range(1000)]
    thresholds = [parse_threshold(text, PATTERNS) for text in texts]
    records = [
        Metric(model="x", group=f"cat{i}", name="soft_constraint_pct.up-to-date", value=50.0, n=9, unit="%")
        for i in range(6)  # cat6 is not measured: its thresholds fail, naming the classes that were
    ]
    summary = Summary(lens="outdated", models=["x"], headline={}, metrics=records)
    gate = judge_all(thresholds, {"outdated": summary}, names={"x": "x"})
    assert len(gate) == 1000
    assert {g.passed for g in gate if g.threshold.group == "cat6"} == {False}
    assert "recorded for the classes cat0, cat1, cat2, cat3, cat4, cat5" in next(g.line() for g in gate if not g.metric)
    assert sum(g.passed for g in gate) == sum(1 for i in range(1000) if i % 7 != 6 and i % 100 <= 50)
    write_junit(tmp_path / "gate.xml", gate, [("outdated", None)])
    suites = list(JUnitXml.fromfile(str(tmp_path / "gate.xml")))
    assert [len(list(suite)) for suite in suites] == [1000, 1]


@pytest.mark.parametrize(
    ("text", "record", "expected"),
    [
        (
            "outdated.soft_constraint_pct.up-to-date.delta >= 0",
            metric(20.8, 13.1, 28.9, "soft_constraint_pct.up-to-date.delta"),
            "+20.8 points (95% CI +13.1 to +28.9 points, n=50); threshold >= 0 points: holds",
        ),
        (
            "outdated.inconsistency_pct.delta <= -5",
            metric(-2.0, -4.0, 1.5, "inconsistency_pct.delta"),
            "−2.0 points (95% CI −4.0 to +1.5 points, n=50); threshold <= -5 points: fails; the whole 95%",
        ),
        (
            "outdated.knowledge_date.delta >= -1",
            metric(-1.2, -2.5, -0.4, "knowledge_date.delta", "year"),
            "−1.2 years (95% CI −2.5 to −0.4 years, n=50); threshold >= -1 years: holds",
        ),
        (
            "outdated.knowledge_date.delta > 0",
            metric(-1.2, -2.5, -0.4, "knowledge_date.delta", "year"),
            "−1.2 years (95% CI −2.5 to −0.4 years, n=50); threshold > 0 years: fails",
        ),
    ],
)
def test_a_change_prints_in_points_or_years_and_its_bound_too(text: str, record: Metric, expected: str) -> None:
    threshold = parse_threshold(text, PATTERNS)
    assert threshold.delta and threshold.value == pytest.approx(float(text.rsplit(" ", 1)[1]))
    assert judge(threshold, record, "b vs baseline").line().startswith(f"{threshold.name} (b vs baseline): {expected}")


def test_a_change_over_no_shared_item_never_holds(tmp_path) -> None:
    """A lens whose units the check cannot know before the run: the comparison shares none, and the threshold
    fails saying why, however loose its bound and whatever the two runs' own records say."""
    from chronoprobe.checkup.baseline import judge_deltas
    from chronoprobe.reports.compare import CompareRow, Comparison, Side

    record = Metric(model="m", group="all", name="soft_constraint_pct.up-to-date", value=0.0, n=130, unit="%")
    run = Run(tmp_path, "outdated", Summary(lens="outdated", models=["m"], headline={}, metrics=[record]))
    row = CompareRow(
        run="r", model="m", lens="outdated", dataset="d", group="all", metric="soft_constraint_pct.up-to-date",
        a=0.0, b=0.0, delta=0.0, ci_low=None, ci_high=None, n=None, p=None, test="none",
        discordant_ab=None, discordant_ba=None, unit="%",
    )  # fmt: skip
    nothing = Comparison(Side(run, "m", "m"), Side(run, "m", "m"), "outdated", rows=[row], shared=0)
    threshold = parse_threshold("outdated.soft_constraint_pct.up-to-date.delta >= -100", PATTERNS)
    [result] = judge_deltas([threshold], [nothing], tmp_path / "baseline", strict=False)
    assert not result.passed and result.line() == (
        f"outdated.soft_constraint_pct.up-to-date.delta >= -100 (m vs baseline {tmp_path / 'baseline'} (m)): "
        "no items shared with the baseline, so no change is measured; fails"
    )
    shared = Comparison(Side(run, "m", "m"), Side(run, "m", "m"), "outdated", rows=[row], shared=130)
    [held] = judge_deltas([threshold], [shared], tmp_path / "baseline", strict=False)
    assert held.passed  # the same numbers over shared items: the bound holds
