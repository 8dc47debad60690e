"""One unit and one formatter per metric: check.md, the card and ``chronoprobe results`` print every number of
every lens the same way (the same value text, the same interval, the same unit), and each unit reads as it
should (a date as YYYY-MM, a duration in years, a rate in percent unless its paper prints it on 0-1)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from chronoprobe.checkup.report import CheckRecord, LensEntry, check_markdown
from chronoprobe.records.runlog import Metric
from chronoprobe.reports.metric_format import brief, cell, quote, span, unit_note, value_text
from chronoprobe.reports.tidy_table import find_runs
from cli_driver import run_main

Key = tuple[str, str, str, str]
"""(run, model, class, metric)."""


def metric(name: str, value: float | None, low: float | None, high: float | None, n: int | None, unit: str) -> Metric:
    return Metric(model="m", group="all", name=name, value=value, n=n, ci_low=low, ci_high=high, unit=unit)


@pytest.mark.parametrize(
    ("record", "value", "quoted", "cell_text"),
    [
        (metric("persuaded_pct", 25.0, 4.5587, 69.9358, 4, "%"), "25.0%", "25.0% (95% CI 4.6–69.9%, n=4)", None),
        (  # a rate the lens adds: in percent
            metric("zero-shot.without.unparseable_rate", 0.65, 0.495, 0.779, 40, "rate"),
            "65.0%",
            "65.0% (95% CI 49.5–77.9%, n=40)",
            "65.0% [49.5, 77.9] (n=40)",
        ),
        (  # a rate DynamicQA's table prints on 0-1
            metric("accuracy_context", 0.125, 0.0224, 0.4709, 8, "rate"),
            "0.125",
            "0.125 (95% CI 0.022–0.471, n=8)",
            "0.125 [0.022, 0.471] (n=8)",
        ),
        (  # a date
            metric("knowledge_date", 2021.75, 2007.1, 2022.2, 11, "year"),
            "2021-10",
            "2021-10 (95% CI 2007-02 to 2022-03, n=11)",
            "2021-10 [2007-02, 2022-03] (n=11)",
        ),
        (  # a duration, as 0.2 stored it ("year") and as it is stored now ("years")
            metric("freshness_half_life_years", 2.5089, 0.5812, 12.3, 9, "year"),
            "2.51 years",
            "2.51 years (95% CI 0.58–12.30 years, n=9)",
            "2.51 years [0.58, 12.30] (n=9)",
        ),
        (  # a half-life whose upper end no resample bounds
            metric("freshness_half_life_years", 4.8837, 1.4441, None, 2, "years"),
            "4.88 years",
            "4.88 years (95% CI 1.44 years to unbounded, n=2)",
            "4.88 years [1.44, unbounded] (n=2)",
        ),
        (metric("cp", 2.8714, 2.49, 3.2201, 8, ""), "2.87", "2.87 (95% CI 2.49–3.22, n=8)", None),
        (metric("cp", 3.0, None, None, None, ""), "3.00", "3.00", "3.00"),
        (metric("se_context", -0.5878, -0.61, -0.5, 2, ""), "-0.588", "-0.588 (95% CI -0.610 to -0.500, n=2)", None),
        (metric("zero-shot.accuracy_delta_pct", -60.0, -80.5, 12.0, 30, "%"), "-60.0%", None, None),
        (metric("ike.seconds_per_edit", 0.0629, None, None, None, ""), "0.0629 s", "0.0629 s", None),
        (metric("facts", 1234.0, None, None, None, "count"), "1,234", "1,234", None),
        (metric("update_success", None, None, None, 0, "rate"), "–", "not measured (n=0)", "– (n=0)"),
    ],
)
def test_each_unit_reads_as_it_should(record: Metric, value: str, quoted: str | None, cell_text: str | None) -> None:
    assert value_text(record) == value
    if quoted is not None:
        assert quote(record) == quoted
    if cell_text is not None:
        assert cell(record) == cell_text


def test_a_rate_on_its_papers_scale_says_so_and_the_others_do_not() -> None:
    assert unit_note(metric("zero-shot.with.accuracy", 0.3, 0.2, 0.4, 90, "rate")) == " (0–1)"
    assert unit_note(metric("update_success", 0.4, 0.3, 0.5, 90, "rate")) == " (0–1)"
    assert unit_note(metric("zero-shot.with.gate_agreement", 0.3, 0.2, 0.4, 90, "rate")) == ""
    assert unit_note(metric("f1", 42.6, 40.0, 45.0, 90, "%")) == ""  # MuLan's F1, in percent as its Table 6
    assert brief(metric("a", 50.0, 40.0, 60.0, 99, "%")) == "50.0% (40.0–60.0%)"
    assert span(metric("a", 50.0, None, None, 99, "%")) == ""


# --- check.md, the card and results agree on every number of every lens --------------------------------------


class _Cells(HTMLParser):
    """The card's number cells: (run, model, class, metric) -> (value text, interval text); the row labels."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[Key, list[str]] = {}
        self.labels: list[str] = []
        self._cell: Key | None = None
        self._span: str | None = None
        self._label = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "td" and "data-metric" in found:
            self._cell = (found["data-run"], found["data-model"], found["data-class"], found["data-metric"])
            self.cells[self._cell] = ["", ""]
        elif tag == "span" and self._cell is not None and found.get("class") in ("v", "v none", "ci"):
            self._span = found["class"].split()[0]
        elif tag == "th" and found.get("class") == "metric":
            self._label = True
            self.labels.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = None
        elif tag == "span":
            self._span = None
        elif tag == "th":
            self._label = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None and self._span is not None:
            self.cells[self._cell][0 if self._span == "v" else 1] += data
        if self._label:
            self.labels[-1] += data


def _results_table(text: str) -> dict[Key, tuple[str, str, str, str]]:
    """``results``'s terminal table: (run, model, class, metric) -> (metric cell, value, ci_low, ci_high)."""
    rows: dict[Key, tuple[str, str, str, str]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) != 10:
            continue
        run, model, _lens, _dataset, group, shown, value, _n, low, high = cells
        rows[(run, model, group, shown.removesuffix(" (0–1)"))] = (shown, value, low, high)
    return rows


def _check_md(markdown: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """check.md's headline tables: (class, model, metric) -> (metric cell, value cell)."""
    rows = {}
    inside = False
    for line in markdown.splitlines():
        if line.startswith("#"):
            inside = line.endswith(": headline numbers")
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if inside and line.startswith("|") and len(cells) == 4 and cells[0] not in ("metric", "---"):
            name, group, model, value = cells
            rows[(group, model, name.removesuffix(" (0–1)"))] = (name, value)
    return rows


@pytest.mark.e2e
def test_check_md_the_card_and_results_print_every_metric_alike(
    run_folders: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folders = [run_folders["root"], run_folders["editing"]]
    runs = find_runs(folders).runs
    assert {r.lens for r in runs} == {"outdated", "conflicts", "recency", "editing"}

    table = run_main(monkeypatch, capsys, "results", *map(str, folders), columns=2000)
    assert table.code == 0, table.text
    results = _results_table(table.out)
    card_path = tmp_path / "card.html"
    made = run_main(monkeypatch, capsys, "card", *map(str, folders), "--out", str(card_path))
    assert made.code == 0, made.text
    page = _Cells()
    page.feed(card_path.read_text(encoding="utf-8"))

    checked = flats = 0
    for run in runs:
        names = {m.key: m.name for m in run.models}
        # check.md shows a lens's headline records; flagged all, its table shows every record of the run
        every = run.summary.model_copy(
            update={"metrics": [m.model_copy(update={"headline": True}) for m in run.summary.metrics]}
        )
        record = CheckRecord(
            budget="quick", models=list(names), names=names, lenses=[LensEntry(lens=run.lens, status="done")]
        )
        markdown = _check_md(check_markdown(record, {run.lens: every}, {}))
        for m in run.summary.metrics:
            model = names.get(m.model, m.model)
            key = (run.label, model, m.group, m.name)
            shown, value, low, high = results[key]
            card_value, card_interval = page.cells[key]
            # the same value text; a number without a value is a dash in the table and in words on the card
            assert card_value == value or (value == "–" and card_value in ("none", "not estimable")), key
            flat = (low, high) == ("no variation", "–")  # an interval of no width says so, never [0.000, 0.000]
            expected = "no variation" if flat else "" if (low, high) == ("–", "–") else f"[{low}, {high}]"
            assert card_interval == expected, key
            assert shown == m.name + unit_note(m), key  # the same unit, said the same way
            if m.value is None:
                continue
            md_name, md_value = markdown[(m.group, model, m.name)]
            assert md_name == shown, key
            assert md_value.startswith(value + " (") or md_value == value, key
            if flat:
                assert md_value == f"{value} (no variation in n = {m.n})", key
                flats += 1
            elif (low, high) != ("–", "–"):
                assert all(end in md_value for end in (low, high) if end != "unbounded"), key
            if m.n is not None and not flat:
                assert f"n={m.n})" in md_value, key
            checked += 1
    assert checked > 100 and flats > 0
    assert any(label.endswith(" (0–1)") for label in page.labels)  # the card's row names say so too

    # what each kind of number looks like, in all three (hand-checked against the fixture's runs)
    outdated = next(r.label for r in runs if r.label.endswith("outdated"))
    forms = {
        (outdated, "dated", "all", "knowledge_date"): r"^\d{4}-\d{2}$",
        (outdated, "dated", "all", "freshness_half_life_years"): r"^\d+\.\d\d years$",
        (outdated, "dated", "all", "soft_constraint_pct.up-to-date"): r"^\d+\.\d%$",
    }
    for key, form in forms.items():
        assert re.match(form, results[key][1]), (key, results[key])
    recency = next(r.label for r in runs if r.lens == "recency")
    assert results[(recency, "echo", "all", "zero-shot.without.accuracy")][1:] == ("0.000", "0.000", "0.242")
    assert results[(recency, "echo", "all", "zero-shot.without.unparseable_rate")][1:] == ("100.0%", "75.8", "100.0")
