"""The outdated report's figures survive real model names and stray start years."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.lenses.outdated.plots import recency_figure, verdicts_figure
from chronoprobe.lenses.outdated.report import plot_recency, plot_verdicts
from chronoprobe.metrics.dyknow import VERDICTS
from chronoprobe.models.names import recorded_short_name, unique_names
from chronoprobe.models.registry import parse_model

LONG = "hf:meta-llama/Meta-Llama-3.1-8B-Instruct-abliterated-very-long-fine-tune-name@0123456789abcdef"
CATEGORIES = ["countries_byGDP", "athletes_byPayment", "companies_byRevenue", "organizations"]


def _summary(years: list[int], name: str | None = None) -> dict[str, Any]:
    shares = dict(zip(VERDICTS, (40.0, 30.0, 20.0, 10.0), strict=True))
    summary: dict[str, Any] = {
        "start_years": years,
        "per_category": {c: {"facts": 10, "soft_constraint_pct": shares} for c in CATEGORIES},
    }
    if name:
        summary["name"] = name
    return summary


@pytest.fixture()
def per_model() -> dict[str, dict[str, Any]]:
    typical = [2015, 2016, 2017, 2018, 2018, 2019, 2019, 2020, 2020, 2021, 2021, 2022]
    return {
        LONG: _summary([*typical, 1513]),
        "qwen-spec": _summary([2016, 2018, 2019, 2020, 2021, 2022, 2023], name="qwen"),
        "smollm2": _summary([]),
    }


def _short(value: str) -> str:
    return parse_model(value).display_name


def test_display_names() -> None:
    named = parse_model("qwen=hf:Qwen/Qwen2.5-0.5B-Instruct")
    assert (named.name, named.spec.raw, named.display_name) == ("qwen", "hf:Qwen/Qwen2.5-0.5B-Instruct", "qwen")
    plain = parse_model("openai:m@https://h/v1?api-version=1")
    assert (plain.name, plain.spec.raw) == (None, "openai:m@https://h/v1?api-version=1")
    assert _short("hf:Qwen/Qwen2.5-0.5B-Instruct@main") == "Qwen2.5-0.5B-Instruct"
    assert _short("hf:Qwen/Qwen2.5-0.5B@v1+me/lora@v2") == _short("hf:Qwen/Qwen2.5-0.5B+me/lora") == "lora"
    assert _short("gguf:/models/tiny.Q4_K_M.gguf") == "tiny.Q4_K_M"
    assert _short("llamacpp:/models/tiny.Q4_K_M.gguf") == "tiny.Q4_K_M.gguf"
    assert _short("openai:gpt-4o-mini@https://api.openai.com/v1") == "gpt-4o-mini"
    assert _short("vllm:org/model@rev") == "model" and _short("smollm2") == "smollm2" and _short("default") == "default"
    assert _short("mock:constant=Paris") == "constant=Paris"
    assert recorded_short_name("hf:org/model") == "model" and recorded_short_name("tiny") == "tiny"
    assert unique_names(["a", "a", "b"]) == ["a", "a (2)", "b"]


def test_recency_axis_is_whole_years_and_ignores_a_1513_outlier(per_model) -> None:
    fig = recency_figure(per_model)
    ax = fig.axes[0]
    bottom, top = ax.get_ylim()
    assert 2005 <= bottom <= 2015 and 2023 <= top <= 2030  # the box is not squashed by 1513
    ticks = [t for t in ax.get_yticks() if bottom <= t <= top]
    assert ticks and all(float(t).is_integer() for t in ticks)
    notes = [t.get_text() for t in ax.texts]
    assert any("no matched" in n for n in notes)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[1].splitlines()[0] == "qwen" and labels[2].splitlines()[0] == "smollm2"
    # what lies off the scale is said under the box's name, in words, not over its points
    assert [label.splitlines()[-3:] for label in labels if "1513" in label] == [
        [f"1 before {bottom:.0f}", "not drawn", "(earliest 1513)"]
    ]
    assert all(len(line) <= 22 for label in labels for line in label.splitlines())


def test_verdicts_use_short_labels_and_keep_a_real_plot_area(per_model) -> None:
    fig = verdicts_figure(per_model)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels][1:] == ["qwen", "smollm2"]
    assert all(len(line) <= 28 for ax in panels for line in ax.get_title().splitlines())
    fig.canvas.draw()
    for ax in panels:
        assert [t.get_text() for t in ax.get_xticklabels()] == CATEGORIES
        assert ax.get_window_extent().height / fig.dpi > 1.8  # inches: a plot, not a strip


@pytest.mark.e2e
def test_files_are_written_as_png_and_svg_with_a_tight_box(per_model, tmp_path: Path) -> None:
    plot_recency(per_model, tmp_path / "recency.png")
    plot_verdicts(per_model, tmp_path / "verdicts.png")
    for stem in ("recency", "verdicts"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 5000
        svg = (tmp_path / f"{stem}.svg").read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    svg = (tmp_path / "recency.svg").read_text(encoding="utf-8")
    assert "How recent are the facts" in svg and "earliest 1513" in svg
    year_labels = re.findall(r">(\d{4}(?:\.\d+)?)<", svg)
    assert year_labels and all("." not in y for y in year_labels)
    # the title is inside the saved picture: the tight box is at least as wide as the title text
    assert "qwen" in svg and LONG not in svg


def test_the_box_plot_names_its_mean_marker(per_model) -> None:
    ax = recency_figure(per_model).axes[0]
    legend = ax.get_legend()
    assert legend is not None
    entries = dict(zip((t.get_text() for t in legend.get_texts()), legend.legend_handles, strict=True))
    assert "mean" in entries and "median" in entries
    # the legend's mean marker is the one drawn on the boxes
    [drawn] = {(line.get_marker(), line.get_markerfacecolor()) for line in ax.lines if line.get_marker() == "^"}
    mean = entries["mean"]
    assert (mean.get_marker(), mean.get_markerfacecolor()) == drawn  # type: ignore[union-attr,attr-defined]  # a legend entry is a Line2D here


def _knowledge_block(start: float) -> dict[str, Any]:
    dates = [start + i / 12 for i in range(24)]
    curve = {"dates": dates, "share": [1 - i / 48 for i in range(24)], "low": [0.4] * 24, "high": [1.0] * 24}
    estimate = {"value": start, "n": 40, "ci_low": start - 1, "ci_high": start + 0.5, "label": "x"}
    return {
        "curve": {"dates": dates, "share": [0.5] * 24},
        "per_category": {"all": {"estimate": estimate}},
        "published_cutoff": "2019-12",
        "published_cutoff_year": 2019.917,
        "staleness": {"per_category": {c: {**curve, "n": 10} for c in ("all", *CATEGORIES)}},
    }


@pytest.mark.e2e
def test_knowledge_figures_keep_long_names_readable() -> None:
    from chronoprobe.lenses.outdated.plots import knowledge_date_figure, staleness_figure

    blocks = {LONG: _knowledge_block(2018.0), "qwen": _knowledge_block(2020.0)}
    dated = knowledge_date_figure(blocks)
    titles = [ax.get_title() for ax in dated.axes if ax.get_visible()]
    assert len(titles) == 2 and all(len(line) <= 32 for t in titles for line in t.splitlines())
    assert any("published cutoff 2019-12" in t.get_text() for ax in dated.axes for t in ax.get_legend().get_texts())
    stale = staleness_figure(blocks)
    panels = [ax for ax in stale.axes if ax.get_visible()]
    assert [ax.get_title().splitlines()[0] for ax in panels] == ["all", *sorted(CATEGORIES)]
    assert all(ax.get_title().endswith("n = 10, 10 values") for ax in panels)
    [legend] = stale.legends
    assert all(len(line) <= 60 for t in legend.get_texts() for line in t.get_text().splitlines())


def test_a_catalogue_with_long_category_names_still_lays_out() -> None:
    """A facts file's own categories can be any length: their ticks are cut, so tight_layout still applies."""
    import warnings

    shares = dict(zip(VERDICTS, (40.0, 30.0, 20.0, 10.0), strict=True))
    long = "heads of the national statistics offices of every member state " * 3
    summary = {"per_category": {c: {"facts": 3, "soft_constraint_pct": shares} for c in (long, "all")}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Tight layout not applied" would raise here
        fig = verdicts_figure({"a": summary, "b": summary})
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks[1] == "all" and ticks[0].count("\n") == 1 and ticks[0].endswith("…")


def test_a_very_long_model_spec_still_lays_out() -> None:
    """A 470-character spec (no NAME=) titles the figure in at most three lines, so tight_layout applies."""
    import warnings

    spec = "mock:constant=" + "an answer that goes on " * 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = verdicts_figure({spec: _summary([2019])})
        recency_figure({spec: _summary([2019])})
    assert fig.get_suptitle().count("\n") <= 2
