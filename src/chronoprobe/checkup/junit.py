"""``check --junit FILE``: the gate as JUnit XML, which CI systems already show (through junitparser).

One test case per threshold and model (a failure when it does not hold), one per lens (skipped
when the check skipped it), in two suites of one ``<testsuites name="chronoprobe check">``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite

from chronoprobe.checkup.thresholds import GateResult
from chronoprobe.records.publish import staged_files

SUITES_NAME = "chronoprobe check"
JUNIT = "a JUnit file written by `chronoprobe check`"
"""What ``--junit`` may replace (the refusal names it)."""


def is_our_junit(path: Path) -> bool:
    """A file this command wrote: JUnit XML whose ``testsuites`` carry our name."""
    try:
        return bool(JUnitXml.fromfile(str(path)).name == SUITES_NAME)
    except Exception:  # not XML, not JUnit, unreadable: not ours
        return False


def junit_xml(gate: Sequence[GateResult], lenses: Sequence[tuple[str, str | None]]) -> JUnitXml:
    """The document: ``gate`` results, then ``lenses`` as (name, reason it was skipped or None)."""
    cases = []
    for result in gate:
        case = TestCase(f"{result.threshold.name} ({result.model})", classname="chronoprobe.checkup.thresholds")
        if not result.passed:
            case.result = [Failure(result.line())]
        case.system_out = result.line()
        cases.append(case)
    lens_cases = []
    for name, skipped in lenses:
        case = TestCase(name, classname="chronoprobe.check.lens")
        if skipped is not None:
            case.result = [Skipped(skipped)]
        lens_cases.append(case)
    thresholds, runs = TestSuite("gate"), TestSuite("lenses")
    thresholds.add_testcases(cases)  # at once: add_testcase recounts the suite each time (1,000 thresholds: 5 s)
    runs.add_testcases(lens_cases)
    document = JUnitXml(SUITES_NAME)
    document.add_testsuite(thresholds)
    document.add_testsuite(runs)
    document.update_statistics()  # type: ignore[no-untyped-call]  # junitparser leaves it unannotated
    return document


def write_junit(path: Path, gate: Sequence[GateResult], lenses: Sequence[tuple[str, str | None]]) -> None:
    """Write the JUnit file at ``path`` (staged and renamed into place; only over a file we wrote)."""

    document = junit_xml(gate, lenses)
    with staged_files(path, "--junit", ours=is_our_junit, what=JUNIT) as staging:
        document.write(str(staging / path.name), pretty=True)
