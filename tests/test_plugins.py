"""Lenses are plug-ins: a lens defined only in tests/ (``toy_lens.py``), registered through the
LENSES table or a ``chronoprobe.lenses`` entry point, runs through ``chronoprobe.run``,
``chronoprobe load``, ``chronoprobe results`` and ``chronoprobe card`` with no change to them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import chronoprobe as cp
from chronoprobe import plugins
from chronoprobe.cli.main import main
from chronoprobe.contract import lens as lens_module
from chronoprobe.errors import DataError

TESTS = Path(__file__).resolve().parent
MODELS = ["year=mock:constant=It was in 2019.", "plain=mock:constant=Paris"]


def _cli(*args: str) -> None:
    saved = sys.argv
    sys.argv = ["chronoprobe", *args]
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None), f"chronoprobe {' '.join(args)} exited with {stopped.code}"
    finally:
        sys.argv = saved


def _check_run(run: cp.Run) -> None:
    assert run.lens == "toy" and run.kind == "toy run"
    values = {(m.model, m.name): (m.value, m.n) for m in run.summary.metrics}
    assert values == {("year", "year_pct"): (100.0, 3), ("plain", "year_pct"): (0.0, 3)}
    assert [type(r).__name__ for r in run.rows] == ["ToyRow"] * 6


def _check_table(table: Path) -> None:
    frame = pd.read_csv(table)
    assert list(frame["model"]) == ["year", "plain"]
    assert set(frame["lens"]) == {"toy"} and set(frame["metric"]) == {"year_pct"}
    assert list(frame["value"]) == [100.0, 0.0] and list(frame["n"]) == [3, 3]
    assert frame["ci_low"].notna().all() and frame["ci_high"].notna().all()


def _check_card(card: Path) -> None:
    page = card.read_text(encoding="utf-8")
    assert '<h2>toy <span class="tag">toy</span>' in page  # a lens without a card part: titled by its name
    assert 'data-lens="toy"' in page and 'data-metric="year_pct"' in page and 'data-value="100.0"' in page


@pytest.mark.e2e
def test_a_lens_in_the_table_runs_through_run_load_results_and_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_lens:ToyLens")
    assert "toy" in cp.lenses()
    out = tmp_path / "toy-run"
    _check_run(cp.run("toy", models=MODELS, out=out, cache=tmp_path / "calls.sqlite"))
    _check_run(cp.load(out))
    _cli("results", str(out), "--out", str(tmp_path / "table.csv"))
    _check_table(tmp_path / "table.csv")
    _cli("card", str(out), "--out", str(tmp_path / "card.html"))
    _check_card(tmp_path / "card.html")


def _dist_info(site: Path) -> None:
    """An installed distribution that declares the toy lens as a ``chronoprobe.lenses`` entry point."""
    info = site / "toy_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\ntoy = toy_lens:ToyLens\n", encoding="utf-8")


@pytest.mark.e2e
def test_a_lens_from_an_entry_point_runs_and_reads_back_in_a_fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _dist_info(site)
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.syspath_prepend(str(site))
    assert "toy" not in lens_module.LENSES
    assert plugins.names()[-1] == "toy" and "toy" in cp.lenses()
    out = tmp_path / "toy-run"
    _check_run(cp.run("toy", models=MODELS, out=out, cache=tmp_path / "calls.sqlite"))

    # a new process finds the lens through the installed entry point alone
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    for args in (
        ["results", str(out), "--out", str(tmp_path / "table.csv")],
        ["card", str(out), "--out", str(tmp_path / "card.html")],
    ):
        done = subprocess.run([sys.executable, "-m", "chronoprobe", *args], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    _check_table(tmp_path / "table.csv")
    _check_card(tmp_path / "card.html")


def test_a_run_of_a_lens_no_longer_installed_is_a_data_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_lens:ToyLens")
    out = tmp_path / "toy-run"
    cp.run("toy", models=MODELS[:1], out=out, cache=tmp_path / "calls.sqlite")
    monkeypatch.delitem(lens_module.LENSES, "toy")
    with pytest.raises(DataError, match="its lens 'toy' is not one of"):
        cp.load(out)


def test_a_lens_of_the_core_alone_compares_unpaired_and_is_skipped_by_a_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No compare part (``comparable``): both values and their difference, no test; no check part: skipped."""
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_lens:ToyLens")
    first, second = tmp_path / "a", tmp_path / "b"
    cp.run("toy", "mock:constant=1999", out=first, cache=tmp_path / "calls.sqlite", progress=False)
    cp.run("toy", "mock:constant=none", out=second, cache=tmp_path / "calls.sqlite", progress=False)
    [row] = cp.compare(first, second)
    assert (row.metric, row.a, row.b, row.delta, row.test, row.n) == ("year_pct", 100.0, 0.0, -100.0, "none", None)
    checked = cp.check("mock:constant=1999", lens=["toy"], out=tmp_path / "check", cache=tmp_path / "calls.sqlite")
    assert [(o.lens, o.status, o.reason) for o in checked.lenses] == [
        ("toy", "skipped", "it declares no check sizes (CheckPart.sizes)")
    ]
