"""``catalogue build``, ``templates`` and ``report`` from Python (``cp.produce``): the commands' tools, on the stand-in."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.templates import shipped_templates
from chronoprobe.lenses.outdated.catalogue_tools import page_progress
from chronoprobe.testing.wdqs import StubWDQS
from cli_driver import run_main


@pytest.fixture(scope="module")
def wdqs() -> Iterator[StubWDQS]:
    with StubWDQS() as server:
        yield server


def test_page_reports_become_steps_of_one_task_per_template() -> None:
    steps: dict[str, list[int]] = {}
    totals: dict[str, int] = {}

    def factory(name: str, total: int) -> Callable[[int], None]:
        totals[name], steps[name] = total, []
        return steps[name].append

    report = page_progress(factory)
    assert report is not None and page_progress(None) is None
    for name, done, total in [("a", 3, 5), ("a", 4, 5), ("b", 1, 1), ("a", 5, 5)]:  # a resumed at page 3
        report(name, done, total)
    assert totals == {"a": 5, "b": 1} and steps == {"a": [3, 1, 1], "b": [1]}


def test_build_then_report_from_python(wdqs: StubWDQS, tmp_path: Path) -> None:
    ticks: list[tuple[str, int]] = []

    def factory(name: str, total: int) -> Callable[[int], None]:
        ticks.append((name, total))
        return lambda steps: None

    out = tmp_path / "built"
    built = cp.produce(
        "catalogue.build", out=out, templates="heads_of_state", endpoint=wdqs.url, per_template=3, progress=factory
    )
    assert (built.facts, built.new_facts, built.dyknow_facts, built.limit) == (3, 0, 3, 3)
    assert [t.name for t in built.templates] == ["heads_of_state"] and built.templates[0].subjects == 3
    assert ticks == [("heads_of_state", 1)]  # three subjects: one page
    assert len(json.loads((out / "catalogue.json").read_text())["facts"]) == 3
    assert json.loads((out / "report.json").read_text())["facts"] == 3

    view = cp.produce("catalogue.report", folder=out)
    assert [row[:3] for row in view.rows] == [("heads_of_state", "P35", "3")]


def test_build_refuses_a_future_date_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^--as-of: 2999-01-01 is in the future"):
        cp.produce("catalogue.build", out=tmp_path / "b", as_of="2999-01-01")
    assert not (tmp_path / "b").exists()


def test_templates_from_python_are_the_shipped_set() -> None:
    listed = cp.produce("catalogue.templates")
    assert [t.name for t in listed] == [t.name for t in shipped_templates()]
    assert "heads_of_state" in {t.name for t in listed}


@pytest.mark.e2e
def test_the_cli_build_bar_goes_when_the_build_ends(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], wdqs: StubWDQS, tmp_path: Path
) -> None:
    import chronoprobe.cli.console as progress_display

    bars: list[bool] = []
    real = progress_display.progress_ticks

    def recorded(transient: bool = False) -> Any:  # the CLI's bar, its transience noted
        bars.append(transient)
        return real(transient)

    monkeypatch.setattr("chronoprobe.cli.tool_command.progress_ticks", recorded)
    out = tmp_path / "built"
    args = ["catalogue", "build", "heads_of_state", "--per-template", "2", "--out", str(out), "--endpoint", wdqs.url]
    ran = run_main(monkeypatch, capsys, *args)
    assert ran.code == 0, ran.text
    assert "deprecated" not in ran.err
    assert "2 facts in 1 categories (0 new, 2 DyKnow) from 1 templates" in ran.err and ran.out == ""
    assert bars == [True]  # the bar goes when the build ends: an error would be the only line left
