"""``chronoprobe compare``, ``check --model A --model B``, ``check --baseline`` and the power and precision of a plan,
on mock models: every lens compared paired, exactly as statsmodels' McNemar and the runs' own values say."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml
from world import World, register_knower

import chronoprobe as cp
from chronoprobe.checkup.config import CheckToolConfig
from chronoprobe.checkup.run import Prepared, plan, prepare
from chronoprobe.contract import lens as lens_module
from chronoprobe.contract.power import Measured, power_text
from chronoprobe.contract.runner import load_models
from chronoprobe.contract.tool import RunSettings, ToolContext
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.reports.compare import COLUMNS, compare_folders
from chronoprobe.testing import unregister_mock
from cli_driver import run_main

LENSES = ["outdated", "conflicts", "recency", "editing"]


def reference_mcnemar(table: list[list[int]]) -> float:
    """statsmodels' exact McNemar p-value, the reference ours is checked against."""
    from statsmodels.stats.contingency_tables import mcnemar  # deferred: statsmodels and scipy, a second to import

    return float(mcnemar(table, exact=True).pvalue)


def _prepared(out: Path, cache: Path, **options: Any) -> Prepared:
    """A check prepared as ``chronoprobe check`` prepares it, before any model loads."""
    return prepare(CheckToolConfig(**options), out, ToolContext(load_models, RunSettings(cache=cache)))


@pytest.fixture(scope="module")
def knowers():
    world = World()
    register_knower("half", world, every=2)
    register_knower("third", world, every=3)
    yield "mock:half", "mock:third"
    unregister_mock("half")
    unregister_mock("third")


@pytest.fixture(scope="module")
def two_models(knowers, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    """One quick check of both mock models over every lens: each lens folder holds both."""
    root = tmp_path_factory.mktemp("two")
    result = cp.check(list(knowers), out=root / "check", cache=root / "calls.sqlite")
    return root / "check", root / "calls.sqlite", result


def _soft_up_to_date(folder: Path) -> dict[str, dict[str, bool]]:
    """Per model, per fact: any paraphrase up to date (the soft constraint), read straight from items.jsonl."""
    found: dict[str, dict[str, bool]] = defaultdict(dict)
    for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        found[row["model"]][row["fact_id"]] = found[row["model"]].get(row["fact_id"], False) or (
            row["verdict"] == "up-to-date"
        )
    return found


@pytest.mark.e2e
def test_every_lens_of_a_two_model_check_compares_paired(two_models) -> None:
    check, _, _ = two_models
    comparisons, _ = compare_folders([check])
    assert sorted(c.lens for c in comparisons) == sorted(LENSES)
    for comparison in comparisons:
        tested = [r for r in comparison.rows if r.test != "none"]
        assert tested, comparison.lens
        assert all(r.n and r.ci_low is not None and r.ci_high is not None for r in tested if r.units and r.units > 1)


@pytest.mark.e2e
def test_the_soft_constraint_is_statsmodels_mcnemar_and_the_runs_own_difference(two_models) -> None:
    check, _, _ = two_models
    rows = cp.compare(check / "outdated")
    row = next(r for r in rows if r.metric == "soft_constraint_pct.up-to-date" and r.group == "all")
    soft = _soft_up_to_date(check / "outdated")
    a, b = soft["mock:half"], soft["mock:third"]  # the run's keys for its models: their specs
    cells = [[0, 0], [0, 0]]
    for fact in a:
        cells[0 if a[fact] else 1][0 if b[fact] else 1] += 1
    assert (row.discordant_ab, row.discordant_ba) == (cells[0][1], cells[1][0])
    assert row.p == pytest.approx(reference_mcnemar(cells), abs=1e-9)
    records = json.loads((check / "outdated" / "run.json").read_text())["summary"]["metrics"]
    own = {m["model"]: m["value"] for m in records if m["name"] == row.metric and m["group"] == "all"}
    expected = (own["mock:half"], own["mock:third"], own["mock:third"] - own["mock:half"])
    assert (row.a, row.b, row.delta) == expected  # the runs' own values, to the last digit
    assert row.test == "exact McNemar" and row.n == len(a)
    assert row.as_dict().keys() == set(COLUMNS)


@pytest.mark.e2e
def test_a_folder_against_itself_differs_by_zero_with_p_one(two_models, tmp_path: Path) -> None:
    check, _, _ = two_models
    copy = tmp_path / "copy"
    shutil.copytree(check / "recency", copy)
    rows = [r for r in cp.compare(check / "recency", copy) if r.model == "half" and r.test != "none"]
    assert rows and all(r.delta == 0 and r.p == 1.0 for r in rows)


@pytest.mark.e2e
def test_the_check_ends_its_paragraph_with_the_paired_verdicts_and_the_card_plots_them(two_models) -> None:
    check, _, result = two_models
    said = result.record.comparisons
    # both date every fact, half with the current value on every second one, third on every third: neither knows
    # more, half is fresher where both answer; never "fresher" from the up-to-date share alone
    assert any(s.startswith("Which of half and third knows more: cannot tell;") for s in said), said
    assert any(s.startswith("Fresher where both answer: half. third gives the current value where both") for s in said)
    assert not any(s.startswith("Fresher:") for s in said), said
    assert any("more persuadable" in s for s in said) and any("fresh data" in s for s in said)
    assert "**Paired.**" in (check / "check.md").read_text()
    assert any(line.startswith("[bold]Paired[/]") for line in result.lines())
    card = (check / "card.html").read_text()
    assert 'id="compared"' in card and '<svg class="forest"' in card


@pytest.mark.e2e
def test_every_plan_line_states_what_its_size_detects(knowers, tmp_path: Path) -> None:
    prepared = _prepared(tmp_path / "check", tmp_path / "calls.sqlite", models=(knowers[0],))
    lines = plan(prepared)
    assert all(line.power is not None and "at 80% power" in line.power for line in lines)
    outdated = next(line for line in lines if line.lens == "outdated")
    assert outdated.power == (
        "130 facts: detects a paired difference of about 11 points at 80% power "
        "(assuming two models disagree on 20% of facts; the call cache measured none)"
    )


def test_a_measured_discordance_sizes_the_power_statement() -> None:
    measured = Measured(rate=0.1, models=("a", "b"), units=130)
    assert power_text(130, "facts", measured) == (
        "130 facts: detects a paired difference of about 8 points at 80% power "
        "(from the discordance of a, b measured in the call cache (10% of 130 facts))"
    )


@pytest.mark.e2e
def test_the_discordance_is_measured_on_the_models_the_cache_answered(knowers, two_models, monkeypatch) -> None:
    from chronoprobe.cache import CachedModel, open_cache
    from chronoprobe.contract import power
    from chronoprobe.models.registry import load_backend, parse_model

    _, cache_path, _ = two_models
    cache = open_cache(cache_path)
    models = [CachedModel(load_backend(parse_model(spec)), cache) for spec in knowers]
    monkeypatch.setattr(power, "_cached_models", lambda _cache: models)
    outdated = lens_module.lens_class("outdated")
    lens = outdated(outdated.config_type())
    lens.load()
    found = power.measured_discordance(lens, cache)
    soft = _soft_up_to_date(two_models[0] / "outdated")
    differ = sum(soft["mock:half"][f] != soft["mock:third"][f] for f in soft["mock:half"])
    assert found is not None and found.rate == pytest.approx(differ / 130) and found.units == 130


@pytest.mark.e2e
def test_a_lens_run_says_what_its_size_detects(monkeypatch, capsys, tmp_path: Path) -> None:
    out = tmp_path / "run"
    ran = run_main(monkeypatch, capsys, "outdated", "run", "--model", "mock:constant=Paris", "--limit", "3", "--out",
                   str(out), "--cache", str(tmp_path / "calls.sqlite"))  # fmt: skip
    assert ran.code == 0, ran.text
    assert "outdated: 3 facts: too few to detect a paired difference at 80% power (assuming" in ran.err


@pytest.mark.e2e
def test_precision_sizes_each_lens_from_the_items_it_has(knowers, tmp_path: Path) -> None:
    prepared = _prepared(
        tmp_path / "check", tmp_path / "c", models=(knowers[0],), precision=3, lens=("outdated", "recency")
    )
    sized = {item.name: item.lens for item in prepared.chosen}
    assert getattr(sized["recency"].config, "sample") == 1068  # noqa: B009 - any lens config; 1.96^2 / (4 * 0.03^2), fewer than RecencyQA has
    assert prepared.sized["recency"] == "--precision 3: sized to 1,068 questions for ±3.0 points"
    assert prepared.sized["outdated"] == (
        "--precision 3: the 130 facts it has give ±8.6 points; `chronoprobe catalogue build` makes more"
    )
    line = next(p for p in plan(prepared) if p.lens == "outdated")
    from chronoprobe.checkup.plan import plan_line

    assert "the 130 facts it has give ±8.6 points" in plan_line(line)
    with pytest.raises(ConfigError, match="--precision"):
        _prepared(tmp_path / "other", tmp_path / "c", models=(knowers[0],), precision=70)


@pytest.fixture(scope="module")
def baseline(knowers, two_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A check of the better model alone, on the outdated lens: last week's."""
    _, cache, _ = two_models
    out = tmp_path_factory.mktemp("baseline") / "check"
    cp.check(knowers[0], out=out, cache=cache, lens=["outdated"])
    return out


@pytest.mark.e2e
def test_a_baseline_gates_a_regression_through_junit(knowers, two_models, baseline, monkeypatch, capsys, tmp_path):
    _, cache, _ = two_models
    junit = tmp_path / "check.xml"
    ran = run_main(monkeypatch, capsys, "check", "--model", knowers[1], "--lens", "outdated", "--out",
                   str(tmp_path / "now"), "--cache", str(cache), "--baseline", str(baseline), "--require",
                   "outdated.soft_constraint_pct.up-to-date.delta >= 0", "--junit", str(junit), columns=300)  # fmt: skip
    assert ran.code == 1, ran.text
    assert "FAILS outdated.soft_constraint_pct.up-to-date.delta >= 0 (third vs baseline" in ran.text
    cases = [case for suite in JUnitXml.fromfile(str(junit)) for case in suite if "delta" in case.name]
    assert len(cases) == 1 and str(baseline) in cases[0].name and "(half)" in cases[0].name
    assert cases[0].result and "whole 95% interval" in cases[0].result[0].message
    assert "Against the baseline" in (tmp_path / "now" / "check.md").read_text()


@pytest.mark.e2e
def test_a_delta_threshold_needs_a_baseline_and_a_baseline_of_other_items_is_refused(knowers, baseline, tmp_path):
    with pytest.raises(ConfigError, match=r"\.delta threshold is a change against --baseline"):
        cp.check(knowers[0], out=tmp_path / "a", require=["outdated.inconsistency_pct.delta <= 0"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="is not a check folder"):
        cp.check(knowers[0], out=tmp_path / "b", baseline=tmp_path / "empty")
    with pytest.raises(ConfigError, match="lies inside the --baseline input"):
        cp.check(knowers[0], out=baseline / "inside", baseline=baseline)
    with pytest.raises(ConfigError, match=r"its outdated run asked other items .*limit"):
        cp.check(knowers[0], out=tmp_path / "c", baseline=baseline, lens=["outdated"], precision=30)
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()


@pytest.mark.e2e
def test_compare_counts_and_names_the_unshared_items_and_refuses_other_sources(tmp_path: Path) -> None:
    from chronoprobe.knowledge.catalogue import shipped_catalogue

    runs = {}
    for name, options in (
        ("five", {"limit": 5}),
        ("eight", {"limit": 8}),
        ("file", {"facts": tmp_path / "c.json"}),
    ):
        if name == "file":
            shutil.copy(shipped_catalogue(), tmp_path / "c.json")
        runs[name] = tmp_path / name
        cp.run(
            "outdated",
            "mock:constant=Paris",
            out=runs[name],
            cache=tmp_path / "calls.sqlite",
            progress=False,
            **options,
        )
    comparisons, _ = compare_folders([runs["five"], runs["eight"]])
    line = comparisons[0].unshared_line()
    assert line is not None and line.startswith("outdated: 3 facts only in B (") and "left out" in line
    with pytest.raises(DataError, match="give --allow-different-items"):
        compare_folders([runs["five"], runs["file"]])
    allowed, _ = compare_folders([runs["five"], runs["file"]], allow_different_items=True)
    assert "only the shared ones are compared" in allowed[0].lines()[0]


@pytest.mark.e2e
def test_the_command_prints_a_table_csv_or_a_file_and_refuses_bad_output(two_models, monkeypatch, capsys, tmp_path):
    check, _, _ = two_models
    table = run_main(monkeypatch, capsys, "compare", str(check / "outdated"), columns=200)
    assert table.code == 0 and "B − A [95% CI]" in table.out and "Fresher:" not in table.out
    assert "Fresher where both answer: " in table.out  # never "fresher" from the up-to-date share alone
    assert "gives a current answer on" in table.out
    csv = run_main(monkeypatch, capsys, "compare", str(check / "outdated"), "--format", "csv")
    assert csv.code == 0 and csv.out.splitlines()[0] == ",".join(COLUMNS)
    out = tmp_path / "paired.json"
    written = run_main(monkeypatch, capsys, "compare", str(check / "recency"), "--out", str(out))
    assert written.code == 0 and json.loads(out.read_text())[0].keys() == set(COLUMNS)
    assert "rows written to" in written.err
    parquet = run_main(monkeypatch, capsys, "compare", str(check / "recency"), "--format", "parquet")
    assert parquet.code == 2 and "give --out FILE.parquet" in parquet.err
    theirs = tmp_path / "notes.csv"
    theirs.write_text("mine\n")
    refused = run_main(monkeypatch, capsys, "compare", str(check / "recency"), "--out", str(theirs))
    assert refused.code == 2 and theirs.read_text() == "mine\n"
    alone = run_main(monkeypatch, capsys, "compare", str(tmp_path / "nothing"))
    assert alone.code == 2 and len(alone.err.strip().splitlines()) == 1


def test_a_plugin_lens_compares_by_declaring_its_items(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_parts:FullToyLens")
    first, second = tmp_path / "a", tmp_path / "b"
    cp.run("toy", "mock:constant=1999", out=first, cache=tmp_path / "calls.sqlite", progress=False)
    cp.run("toy", "mock:constant=none", out=second, cache=tmp_path / "calls.sqlite", progress=False)
    [row] = cp.compare(first, second)
    assert (row.metric, row.a, row.b, row.delta, row.test) == ("year_pct", 100.0, 0.0, -100.0, "exact McNemar")
    assert (row.discordant_ab, row.discordant_ba, row.n) == (3, 0, 3)
