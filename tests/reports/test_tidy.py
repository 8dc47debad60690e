"""``chronoprobe results``: the tidy reader on real result folders of every lens, hand-checked rows,
folder discovery and errors, and CSV / JSON / Parquet round trips through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from chronoprobe.errors import DataError
from chronoprobe.records.runlog import Metric
from chronoprobe.reports.tidy_table import (
    COLUMNS,
    Row,
    find_runs,
    read_run,
    results_frame,
    run_rows,
)

pytestmark = pytest.mark.e2e


def _rows(path: Path) -> list[Row]:
    run = read_run(path)
    assert run is not None
    return run_rows(run)


def _pick(rows: list[Row], model: str, cls: str, metric: str) -> Metric:
    """The one record of ``metric`` over ``cls`` for the model the table names ``model``."""
    found = [r.metric for r in rows if (r.model, r.metric.group, r.metric.name) == (model, cls, metric)]
    assert len(found) == 1, (model, cls, metric, found)
    return found[0]


def test_outdated_run_rows_hand_checked(run_folders: dict[str, Path]) -> None:
    rows = _rows(run_folders["outdated"])
    assert {r.model for r in rows} == {"dated", "paris"}  # display names, not specs
    assert {(r.lens, r.dataset, r.run) for r in rows} == {
        ("outdated", "dyknow-2023-12-18", str(run_folders["outdated"]))
    }
    # The four facts: Italy's president (up to date), Italy's head of government (the president's
    # name: irrelevant), the US president (Trump: outdated), China's (Paris: irrelevant).
    expected = {"up-to-date": 25.0, "outdated": 25.0, "irrelevant": 50.0, "ambiguous": 0.0}
    for verdict, value in expected.items():
        row = _pick(rows, "dated", "all", f"soft_constraint_pct.{verdict}")
        assert (row.value, row.n) == (value, 4)
    up = _pick(rows, "dated", "all", "soft_constraint_pct.up-to-date")
    assert up.ci_low == pytest.approx(4.55872608097006) and up.ci_high == pytest.approx(69.9358157417598)  # Wilson 1/4
    assert _pick(rows, "dated", "all", "average_pct.outdated").n == 12  # 4 facts x 3 paraphrases
    assert _pick(rows, "paris", "countries_byGDP", "soft_constraint_pct.irrelevant").value == 100.0
    assert _pick(rows, "paris", "all", "inconsistency_pct").value == 0.0


def test_outdated_score_rows_are_percentages_under_the_run_names(run_folders: dict[str, Path]) -> None:
    rows = _rows(run_folders["score"])
    assert {(r.model, r.lens, r.dataset) for r in rows} == {("other-model", "outdated", "dyknow-2023-12-18")}
    # Three paraphrases: Mattarella, Napolitano (president until 2015), Mattarella.
    average = _pick(rows, "other-model", "all", "average_pct.up-to-date")
    assert average.value == pytest.approx(200 / 3) and average.n == 3
    assert average.ci_low == pytest.approx(20.76596008020478)  # Wilson 2/3, in percent
    assert _pick(rows, "other-model", "all", "average_pct.outdated").value == pytest.approx(100 / 3)
    assert _pick(rows, "other-model", "all", "inconsistency_pct").value == 100.0
    assert _pick(rows, "other-model", "countries_byGDP", "soft_constraint_pct.up-to-date").n == 1
    summary = json.loads((run_folders["score"] / "summary.json").read_text())
    assert summary["overall"]["average"]["up-to-date"] == pytest.approx(2 / 3)  # the file keeps shares


def test_conflicts_rows_carry_every_estimate(run_folders: dict[str, Path]) -> None:
    for name, dataset in (("dynamicqa", "dynamicqa"), ("mulan", "mulan")):
        summary = json.loads((run_folders[name] / "summary.json").read_text())
        rows = _rows(run_folders[name])
        assert {(r.lens, r.dataset) for r in rows} == {("conflicts", dataset)}
        names = {m["given_name"] or m["spec"]: m["name"] for m in summary["provenance"]["models"]}
        flat = {  # per-relation F1 is one estimate per relation
            (spec, cls, metric if "value" in e else f"{metric}.{sub}"): e if "value" in e else e[sub]
            for spec, per_class in summary["summary"].items()
            for cls, group in per_class.items()
            for metric, e in group["estimates"].items()
            if e is not None  # a metric that does not apply to the class (no-context accuracy of disputed facts)
            for sub in ([None] if "value" in e else e)
        }
        expected = {
            (names[spec], cls, metric): (e["value"], e["n"], e["ci_low"], e["ci_high"])
            for (spec, cls, metric), e in flat.items()
        }
        assert {
            (r.model, r.metric.group, r.metric.name): (r.metric.value, r.metric.n, r.metric.ci_low, r.metric.ci_high)
            for r in rows
        } == expected
    mulan = _rows(run_folders["mulan"])
    assert _pick(mulan, "echo", "mutable", "update_success").value is None  # no updates: no value, n = 0
    assert _pick(mulan, "echo", "mutable", "update_success").n == 0


def test_recency_rows_carry_strategy_and_context(run_folders: dict[str, Path]) -> None:
    summary = json.loads((run_folders["recency"] / "summary.json").read_text())
    rows = _rows(run_folders["recency"])
    entry = next(r for r in summary["runs"] if r["model"] == "echo" and r["context_mode"] == "with")
    accuracy = _pick(rows, "echo", "all", "zero-shot.with.accuracy")
    assert (accuracy.value, accuracy.n) == (entry["accuracy"], entry["n"])
    stationary = _pick(rows, "echo", "Stationary", "zero-shot.with.macro_f1")
    assert stationary.n == entry["Stationary"]["n"]
    label, f1 = next(iter(entry["per_class_f1"].items()))
    per_label = _pick(rows, "echo", label, "zero-shot.with.f1")
    interval = entry["per_class_f1_estimates"][label]
    assert (per_label.value, per_label.n, per_label.ci_low) == (f1, interval["n"], interval["ci_low"])
    transition = _pick(rows, "paris", "Non-Stationary", "zero-shot.transition_accuracy")
    assert transition.n == summary["table7"][1]["estimates"]["transition_accuracy"]["n"]
    assert {r.dataset for r in rows} == {"recency_sample"}


def test_a_parent_folder_gives_every_lens(run_folders: dict[str, Path], tmp_path: Path) -> None:
    found = find_runs([run_folders["root"]])
    assert sorted(r.kind for r in found.runs) == [
        "conflicts run",
        "conflicts run",
        "outdated run",
        "outdated score",
        "recency eval",
    ]
    assert found.warnings == []
    # Naming a run folder twice (directly and through its parent) reads it once.
    again = find_runs([run_folders["outdated"], run_folders["root"]])
    assert len(again.runs) == 5 and again.runs[0].label == str(run_folders["outdated"])

    parent = tmp_path / "mixed"
    shutil.copytree(run_folders["recency"], parent / "recency")
    (parent / "notes").mkdir()
    (parent / "notes" / "summary.json").write_text('{"something": "else"}')
    (parent / "empty").mkdir()
    found = find_runs([parent])
    assert [r.lens for r in found.runs] == ["recency"]
    assert len(found.warnings) == 2 and "notes" in found.warnings[0]
    assert (
        found.warnings[1]
        == f"skipped 1 folder(s) under {parent} with no result folder within 3 levels: {parent / 'empty'}"
    )


@pytest.mark.parametrize("case", ["missing", "file", "empty", "unknown", "corrupt", "wrong-shape", "corrupt-log"])
def test_folders_that_are_not_results_are_one_line_errors(
    case: str, run_folders: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "target"
    if case == "file":
        target.write_text("x")
    elif case == "empty":
        target.mkdir()
    elif case == "unknown":
        target.mkdir()
        (target / "summary.json").write_text('{"a": 1}')
    elif case in ("corrupt", "wrong-shape"):
        shutil.copytree(run_folders["dynamicqa"], target)
        text = '{"classes": ' if case == "corrupt" else '{"classes": ["static"], "summary": {"m": {"static": 3}}}'
        (target / "summary.json").write_text(text)
        (target / "run.json").unlink()  # else the intact run log is read instead
    elif case == "corrupt-log":
        shutil.copytree(run_folders["dynamicqa"], target)
        (target / "run.json").write_text('{"summary": ')
    with pytest.raises(DataError) as error:
        results_frame([target])
    assert str(target) in str(error.value) and "\n" not in str(error.value)


# --- the CLI ------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}  # the terminal table gets a wide terminal
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", "results", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _same(read: pd.DataFrame, frame: pd.DataFrame) -> None:
    assert list(read.columns) == list(COLUMNS)
    pd.testing.assert_frame_equal(
        read.astype({"n": "Int64"}).astype({c: "string" for c in COLUMNS[:6]}), frame, check_exact=False, rtol=1e-12
    )


def test_csv_json_parquet_round_trip(run_folders: dict[str, Path], tmp_path: Path) -> None:
    frame, _ = results_frame([run_folders["root"]])
    assert len(frame) > 100 and set(frame["lens"]) == {"outdated", "conflicts", "recency"}
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"table.{fmt}"
        done = _cli(str(run_folders["root"]), "--out", str(out))
        assert done.returncode == 0, done.stderr
        if fmt == "csv":
            read = pd.read_csv(out, keep_default_na=False, na_values=[""])
        elif fmt == "json":
            read = pd.DataFrame(json.loads(out.read_text()))
            read[["value", "ci_low", "ci_high"]] = read[["value", "ci_low", "ci_high"]].astype("float64")
        else:
            read = pd.read_parquet(out)
        _same(read, frame)
    stdout = _cli(str(run_folders["root"]), "--format", "csv")
    assert stdout.returncode == 0 and stdout.stdout == (tmp_path / "table.csv").read_text()


def test_terminal_table_and_errors(run_folders: dict[str, Path], tmp_path: Path) -> None:
    table = _cli(str(run_folders["mulan"]))
    assert table.returncode == 0 and "immutable-N" in table.stdout and "update_success" in table.stdout
    for args, needle in [
        ([str(tmp_path / "nowhere")], "no such folder"),
        ([str(run_folders["root"]), "--format", "parquet"], "parquet is binary"),
        ([str(run_folders["root"]), "--out", str(tmp_path / "t.xlsx")], "cannot tell the format"),
        ([str(run_folders["root"]), "--out", str(run_folders["outdated"] / "table.csv")], "is a result folder"),
    ]:
        done = _cli(*args)
        assert done.returncode == 2, done.stderr
        assert needle in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (run_folders["outdated"] / "table.csv").exists()


@pytest.mark.parametrize("lens", ["outdated", "dynamicqa", "mulan", "recency"])
def test_run_log_alone_gives_the_same_rows_as_summary_json(
    lens: str, run_folders: dict[str, Path], tmp_path: Path
) -> None:
    source = run_folders[lens]
    assert (source / "run.json").is_file()
    only_log = tmp_path / "only-log"
    only_log.mkdir()
    shutil.copy(source / "run.json", only_log / "run.json")
    only_summary = tmp_path / "only-summary"
    only_summary.mkdir()
    shutil.copy(source / "summary.json", only_summary / "summary.json")

    def numbers(path: Path) -> list[tuple[object, ...]]:
        return sorted(
            (r.model, r.metric.group, r.metric.name, r.metric.value, r.metric.n, r.metric.ci_low, r.metric.ci_high)
            for r in _rows(path)
        )

    assert numbers(only_log) == numbers(only_summary)
    assert numbers(only_log)


def test_results_in_80_columns_cut_no_cell_and_keep_two_runs_apart(
    run_folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_driver import run_main

    root = run_folders["root"]
    ran = run_main(monkeypatch, capsys, "results", str(root), columns=80)
    assert ran.code == 0, ran.text
    lines = ran.out.splitlines()
    assert "…" not in ran.out
    frame, _ = results_frame([root])
    runs = list(dict.fromkeys(frame["run"]))
    headings = [f"run {number}: {run}" for number, run in enumerate(runs, start=1)]
    assert set(headings) <= set(lines)  # every run folder named whole, on a line of its own (a terminal wraps it)
    assert max(len(line) for line in lines if line not in headings) <= 80
    assert sum(line.startswith("run ") for line in lines) == len(frame.groupby(["run", "model"]))
    assert "`--format csv` prints the one table with every value in full" in " ".join(ran.out.split())
    outdated = frame[(frame["lens"] == "outdated") & (frame["model"] == "dated")]
    row = outdated[(outdated["class"] == "all") & (outdated["metric"] == "soft_constraint_pct.up-to-date")]
    low, high = row["ci_low"].iloc[0], row["ci_high"].iloc[0]
    assert any(
        line.split()[:2] == ["all", "soft_constraint_pct.up-to-date"] and f"[{low:.1f}, {high:.1f}]" in line
        for line in lines
    )
    wide = run_main(monkeypatch, capsys, "results", str(root), columns=1000)
    assert "┃ run " in wide.out and "grouped by run" not in wide.out  # wide enough: the one table, every cell whole
