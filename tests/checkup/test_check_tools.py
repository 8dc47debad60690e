"""``chronoprobe check`` and ``chronoprobe results`` as tools: ``cp.produce("check" | "results", ...)`` on a
model that answers every question "Paris", so every number is known by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from junitparser import JUnitXml

import chronoprobe as cp
from chronoprobe.contract.tool import tool_class

PARIS = "mock:constant=Paris"
METRIC = "soft_constraint_pct.up-to-date"
CURRENT = f"outdated.{METRIC}"
"""The threshold's name for it: lens, metric (class all)."""
Z = 1.959963984540054


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson interval of ``hits`` out of ``n``, in percent (written out here, not imported)."""
    p, z2 = hits / n, Z * Z
    centre, spread = (p + z2 / (2 * n)) / (1 + z2 / n), Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return 100 * (centre - spread), 100 * (centre + spread)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[cp.CheckResult, Path]:
    """One quick check of the outdated lens (130 facts, none answered with a current value), with a JUnit file."""
    root = tmp_path_factory.mktemp("check")
    result = cp.produce(
        "check",
        models=PARIS,
        lens="outdated",
        out=root / "check",
        cache=root / "calls.sqlite",
        require=[f"{CURRENT} <= 5", f"{CURRENT} >= 40"],
        junit=root / "gate.xml",
        progress=False,
    )
    return result, root


@pytest.mark.e2e
def test_produce_check_runs_the_lens_judges_the_thresholds_and_writes_junit(
    checked: tuple[cp.CheckResult, Path], tmp_path: Path
) -> None:
    result, root = checked
    assert result.path == root / "check" and sorted(result.runs) == ["outdated"]
    assert (root / "check" / "check.md").is_file() and (root / "check" / "card.html").is_file()
    current = next(m for m in result.runs["outdated"].summary.metrics if m.name == METRIC and m.group == "all")
    assert (current.value, current.n, current.ci_low) == (0.0, 130, 0.0)
    assert current.ci_high == pytest.approx(wilson(0, 130)[1])
    # 0 of 130: the interval tops out at 2.87%, under 5 (holds) and nowhere near 40 (fails on the whole interval)
    assert wilson(0, 130)[1] == pytest.approx(2.8702, abs=1e-4)
    assert [(gate.passed, gate.line().split(" (")[0]) for gate in result.gate] == [
        (True, f"{CURRENT} <= 5"),
        (False, f"{CURRENT} >= 40"),
    ]
    assert not result.passed
    assert tool_class("check").from_options(models=PARIS).exit_status(result) == 1
    cases = {
        suite.name: [(case.name, case.is_failure) for case in suite]
        for suite in JUnitXml.fromfile(str(root / "gate.xml"))
    }
    assert cases["gate"] == [(f"{CURRENT} <= 5 (constant=Paris)", False), (f"{CURRENT} >= 40 (constant=Paris)", True)]

    # the engine travels with the other model options, and a bad one is refused before a folder is made
    with pytest.raises(cp.ConfigError, match=r"^--engine 'banana': unknown engine"):
        cp.produce("check", models=PARIS, out=tmp_path / "again", engine="banana", progress=False)
    assert not (tmp_path / "again").exists()
    with pytest.raises(cp.ConfigError, match=r"^--engine 'banana': unknown engine"):  # cp.check alike
        cp.check(PARIS, out=tmp_path / "again", engine="banana")
    assert not (tmp_path / "again").exists()


def test_produce_results_is_the_tidy_table_of_the_check_folder(
    checked: tuple[cp.CheckResult, Path], tmp_path: Path
) -> None:
    _, root = checked
    frame = cp.produce("results", dirs=[root / "check"], progress=False)
    assert isinstance(frame, pd.DataFrame) and set(frame["lens"]) == {"outdated"}
    assert set(frame["model"]) == {"constant=Paris"}
    rows = frame[(frame["class"] == "all") & frame["metric"].str.startswith("soft_constraint_pct.")]
    shown = {
        m.removeprefix("soft_constraint_pct."): (v, n)
        for m, v, n in zip(rows["metric"], rows["value"], rows["n"], strict=True)
    }
    assert shown == {
        "up-to-date": (0.0, 130),
        "outdated": (0.0, 130),
        "irrelevant": (100.0, 130),
        "ambiguous": (0.0, 130),
    }
    irrelevant = rows[rows["metric"] == "soft_constraint_pct.irrelevant"].iloc[0]
    assert (irrelevant["ci_low"], irrelevant["ci_high"]) == pytest.approx(wilson(130, 130))

    out = tmp_path / "table.csv"
    written = cp.produce("results", dirs=[root / "check"], out=out, progress=False)
    pd.testing.assert_frame_equal(written, frame)
    assert out.read_text().splitlines()[0] == "run,model,lens,dataset,class,metric,value,n,ci_low,ci_high"
    assert len(out.read_text().splitlines()) == len(frame) + 1
    with pytest.raises(cp.ConfigError, match=r"^--format: unknown format 'xml'"):
        cp.produce("results", dirs=[root / "check"], format="xml", progress=False)
