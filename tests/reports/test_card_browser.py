"""The report card in a real headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it).

Loads a card of every lens over the Chrome DevTools Protocol and checks what a reader sees:
the model names, editing methods by their report names, every number cell equal to its run
folder's summary.json, recency's confusion matrices shown large enough to read, no request that
leaves the file, no console error; then saves a screenshot. Set CHRONOPROBE_CARD_SCREENSHOT
to a path to keep a copy (that is how docs/img/card.png is made).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cdp_browser import Browser, find_browser, is_local
from summary_values import expected

from chronoprobe.lenses.recency.report import CONFUSION_DPI, CONFUSION_FONT_PT

BROWSER = find_browser()
pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="no chromium binary (apt-get install chromium; .ci/run does)"),
    pytest.mark.e2e,
]

CONFUSION_JS = (
    "JSON.stringify([...document.images].filter(i => i.alt.startsWith('confusion_'))"
    ".map(i => [i.getBoundingClientRect().width, i.getBoundingClientRect().height, i.naturalWidth, i.naturalHeight]))"
)
SIZES_JS = (
    "JSON.stringify([...document.images].map(i => [i.alt, i.src.slice(5, 18), i.getBoundingClientRect().width, "
    "i.naturalWidth, i.width, i.getAttribute('width')]))"
)
CELLS_JS = (
    "JSON.stringify([...document.querySelectorAll('td[data-metric]')].map(e => ({...e.dataset, text: e.textContent})))"
)


@pytest.fixture(scope="module")
def card(run_folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("card") / "card.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "card",
            str(run_folders["root"]),
            str(run_folders["editing"]),
            "--out",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_card_in_headless_chromium(card: Path, run_folders: dict[str, Path], tmp_path: Path) -> None:
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    assert BROWSER is not None
    url = card.resolve().as_uri()
    with Browser(BROWSER, tmp_path / "profile") as browser:
        browser.open(url)
        cells = json.loads(browser.evaluate(CELLS_JS))
        text = browser.evaluate("document.body.innerText")
        sections = browser.evaluate("[...document.querySelectorAll('section.lens')].map(s => s.id)")
        images = browser.evaluate("[...document.images].map(i => [i.complete, i.naturalWidth])")
        confusion = json.loads(browser.evaluate(CONFUSION_JS))
        sizes = json.loads(browser.evaluate(SIZES_JS))
        contents = browser.evaluate("[...document.querySelectorAll('nav.toc a')].map(a => a.getAttribute('href'))")
        targets = browser.evaluate("[...document.querySelectorAll('[id]')].map(e => '#' + e.id)")
        methods = browser.evaluate("[...document.querySelectorAll('#editing th.metric')].map(e => e.textContent)")
        shot = browser.screenshot(tmp_path / "card.png")
        browser.settle(0.3)

    # Model names as the runs named them (NAME=SPEC), and one section per lens.
    for name in ("dated", "paris", "echo", "other-model"):
        assert name in text
    assert sections == ["outdated", "conflicts", "recency", "editing"]
    assert images and all(done and width > 0 for done, width in images)  # every figure decoded

    # Editing methods by their report names; the recency confusion matrices' smallest text about 10 px as shown.
    assert "soft constraint · IKE" in methods and not [m for m in methods if "ike-null" in m]
    assert len(confusion) == 4
    for shown_width, shown_height, width, height in confusion:
        assert shown_width / width == pytest.approx(shown_height / height, rel=0.02)  # not distorted
        assert CONFUSION_FONT_PT / 72 * CONFUSION_DPI * shown_height / height >= 9.5

    # Every figure at (nearly) the size it was drawn for: an SVG at its points, a PNG at its recorded resolution,
    # so a small multiple such as the staleness plot keeps its text readable.
    for alt, mime, shown, natural, _, drawn in sizes:
        intended = float(drawn) if drawn else natural  # a PNG's width attribute is its drawn size in CSS px
        assert shown >= 0.9 * intended or shown >= 1000, (alt, mime, shown, intended)
    # A table of contents at the top whose every entry leads to a place on the page.
    assert len(contents) > 10 and set(contents) <= set(targets)

    # Every number cell equals its run folder's summary.json.
    folders = {str(path): path for path in run_folders.values()}
    assert len(cells) > 200
    for cell in cells:
        value, n = expected(folders[cell["run"]], cell["model"], cell["class"], cell["metric"])
        shown = None if cell["value"] == "" else float(cell["value"])
        assert shown == (None if value is None else pytest.approx(value, rel=1e-12, abs=1e-12)), cell
        assert (None if cell["n"] == "" else int(cell["n"])) == n, cell
        if value is None:  # in words, never a dash beside "n=0"
            assert cell["text"] == "none" if not n else cell["text"].startswith("not estimable"), cell
        if n:
            assert f"n={n}" in cell["text"], cell
    headline = next(
        c
        for c in cells
        if c["model"] == "dated" and c["metric"] == "soft_constraint_pct.up-to-date" and c["class"] == "all"
    )
    assert headline["text"].startswith("25.0%") and "[4.6, 69.9]" in headline["text"]

    # Nothing left the file; nothing went wrong in the page.
    assert browser.log.requests, "the page load itself should be recorded"
    leaving = [u[:120] for u in browser.log.requests if not is_local(u, url)]
    assert leaving == []
    assert browser.log.errors() == []

    assert shot.stat().st_size > 50_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("CHRONOPROBE_CARD_SCREENSHOT")
    if keep:
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, keep)


TICKS_JS = r"""JSON.stringify([...document.querySelectorAll('g[id^="axes_"]')].flatMap(axes =>
  ['xtick_', 'ytick_'].map(kind => [...axes.querySelectorAll(`g[id^="${kind}"] g[id^="text_"]`)]
    .filter(g => !/rotate\(-?(?!0[ ,)])[0-9.]+/.test(g.innerHTML))
    .map(g => {const r = g.getBoundingClientRect();
      return {text: g.textContent.trim(), left: r.left, right: r.right, top: r.top, bottom: r.bottom};}))))"""
"""Per axes of a matplotlib SVG, its x and its y tick labels (those not rotated), each with its box as drawn."""
LABELS_JS = (
    "JSON.stringify([...document.querySelectorAll('svg.forest text')].map(t => {const r = t.getBBox();"
    " return {text: t.textContent, left: r.x, right: r.x + r.width, top: r.y, bottom: r.y + r.height,"
    " tick: t.classList.contains('tick')};}))"
)


def _svg_figures(card: Path, folder: Path) -> list[Path]:
    """Each SVG figure of the card, as its own file (an <img> shows an SVG but keeps its text out of the page)."""
    found = []
    for index, tag in enumerate(re.findall(r"<img [^>]*>", card.read_text(encoding="utf-8"))):
        source = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', tag)
        alt = re.search(r'alt="([^"]*)"', tag)
        if source is not None and alt is not None:
            found.append(folder / f"{index}-{alt.group(1)}.svg")
            found[-1].write_bytes(base64.b64decode(source.group(1)))
    return found


def overlapping(boxes: list[dict[str, Any]], gap: float = 0.5) -> list[tuple[str, str]]:
    """Pairs of boxes (left, right, top, bottom) that share more than ``gap`` px both ways."""
    pairs = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            wide = min(a["right"], b["right"]) - max(a["left"], b["left"])
            tall = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
            if wide > gap and tall > gap:
                pairs.append((a["text"], b["text"]))
    return pairs


def test_no_axis_labels_overlap_in_any_figure_at_1280_px(card: Path, tmp_path: Path) -> None:
    """A full-page screenshot at 1280 px, then every figure's tick labels read back as boxes (getBBox and the
    client rectangles through the DevTools protocol): no two labels of one axis overlap, in any figure, the
    comparison plot included."""
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    assert BROWSER is not None
    figures = _svg_figures(card, tmp_path)
    assert {"staleness", "knowledge_date", "recency", "verdicts", "methods"} <= {
        f.stem.split("-", 1)[1] for f in figures
    }
    crowded = {}
    with Browser(BROWSER, tmp_path / "profile", width=1280) as browser:
        browser.open(card.resolve().as_uri())
        shot = browser.screenshot(tmp_path / "card-1280.png", full_page=True)
        for figure in figures:
            browser.open(figure.resolve().as_uri())
            axes = json.loads(browser.evaluate(TICKS_JS))
            assert any(axes), figure.name  # the labels are found (as text or as glyph paths)
            found = [pair for labels in axes for pair in overlapping(labels)]
            if found:
                crowded[figure.name] = found
    assert shot.stat().st_size > 50_000
    keep = os.environ.get("CHRONOPROBE_CARD_SCREENSHOT_1280")
    if keep:
        shutil.copyfile(shot, keep)
    assert crowded == {}


def _narrow_staleness(months: int) -> dict[str, dict[str, object]]:
    """Two models' staleness curves over ``months`` months from 2020 (one of them with no curve for a category)."""
    dates = [2020.0 + i / 12 for i in range(months + 1)]
    curve = {"n": 5, "dates": dates, "share": [1 - i / (2 * months) for i in range(months + 1)]}
    curve |= {"low": [0.0] * len(dates), "high": [1.0] * len(dates)}
    return {
        "half": {"staleness": {"per_category": {"all": curve, "countries": curve}}},
        "third": {"staleness": {"per_category": {"all": curve}}},
    }


def test_a_narrow_staleness_panel_keeps_its_years_apart_and_the_check_can_fail(tmp_path: Path) -> None:
    """Staleness panels three years wide (matplotlib ticks them every half year, "2021.02021.52022.0"): whole years
    only, none overlapping; and the check catches labels that run together (the same panel ticked every half
    year). A model without a curve in a panel is named, not a dash."""
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    assert BROWSER is not None
    from chronoprobe.lenses.outdated.plots import save_figure, staleness_figure

    fitted = staleness_figure(_narrow_staleness(40))
    titles = [ax.get_title() for ax in fitted.axes if ax.get_visible()]
    assert titles == ["all\nn = 5, 5 values", "countries\nvalues: 5 for half, none for third"]
    crowded = staleness_figure(_narrow_staleness(40))
    for ax in crowded.axes:  # as matplotlib ticked it
        ax.set_xticks([2019.5 + i / 2 for i in range(9)], [f"{2019.5 + i / 2:.1f}" for i in range(9)])
    drawn = [
        save_figure(figure, tmp_path / f"{name}.png")[1] for name, figure in (("fitted", fitted), ("crowded", crowded))
    ]
    with Browser(BROWSER, tmp_path / "profile", width=1280) as browser:
        found = []
        for svg in drawn:
            browser.open(svg.resolve().as_uri())
            axes = json.loads(browser.evaluate(TICKS_JS))
            found.append([pair for labels in axes for pair in overlapping(labels)])
            years = [label["text"] for labels in axes for label in labels if "." not in label["text"]]
            assert years, svg.name
    assert found[0] == [] and found[1], found


def test_a_card_that_reaches_out_is_caught(tmp_path: Path) -> None:
    """The checks above can fail: a page with a remote image and a console error trips both."""
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    assert BROWSER is not None
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>'
        '<img src="http://example.invalid/x.png"><p>x</p></body></html>'
    )
    url = page.resolve().as_uri()
    with Browser(BROWSER, tmp_path / "profile") as browser:
        browser.open(url)
        browser.evaluate("console.error('boom')")
        browser.settle(0.5)
    assert [u for u in browser.log.requests if not is_local(u, url)] == ["http://example.invalid/x.png"]
    assert any("boom" in e for e in browser.log.errors())


FOREST_JS = (
    "JSON.stringify([...document.querySelectorAll('#compared svg.forest')].map(svg => {"
    "const box = svg.getBoundingClientRect();"
    "return {width: box.width, height: box.height,"
    " bars: [...svg.querySelectorAll('g')].map(g => {const dot = g.querySelector('circle').getBoundingClientRect();"
    " const bar = g.querySelector('line').getBoundingClientRect(); const label = g.querySelector('text');"
    " return {label: label.textContent, labelWidth: label.getBoundingClientRect().width,"
    " inside: dot.left >= box.left && dot.right <= box.right && bar.left >= box.left && bar.right <= box.right,"
    " colour: g.querySelector('circle').getAttribute('fill')};})};}))"
)


def test_the_comparison_plot_reads_at_a_glance(run_folders: dict[str, Path], tmp_path: Path) -> None:
    """The card's paired comparison (two models of one run, as a check of two models shows it): one bar per headline
    share with its point inside the plot, its label whole, and the plot as wide as the section allows."""
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    assert BROWSER is not None
    from chronoprobe.records.runlog import load_run
    from chronoprobe.reports.card import render_card
    from chronoprobe.reports.compare import compare_runs
    from chronoprobe.reports.compare_card import comparison_section

    run = load_run(run_folders["outdated"])
    page = tmp_path / "compared.html"
    page.write_text(render_card([run], extra=[comparison_section(compare_runs([run]))]), encoding="utf-8")
    url = page.resolve().as_uri()
    with Browser(BROWSER, tmp_path / "profile") as browser:
        browser.open(url)
        plots = json.loads(browser.evaluate(FOREST_JS))
        labels = json.loads(browser.evaluate(LABELS_JS))
        text = browser.evaluate("document.querySelector('#compared').innerText")
        shot = browser.screenshot(tmp_path / "compared.png")
        browser.settle(0.3)
    assert len(plots) == 1 and plots[0]["width"] >= 700 and plots[0]["height"] > 100
    bars = plots[0]["bars"]
    assert [b["label"] for b in bars] == [
        "up-to-date (soft constraint)",
        "outdated (soft constraint)",
        "irrelevant (soft constraint)",
        "ambiguous (soft constraint)",
        "inconsistent across paraphrases",
        "gives a dated answer, current or not",
    ]  # as the tables name them
    ticks = [label["text"] for label in labels if label["tick"]]
    assert len(ticks) >= 5 and "0" in ticks and ticks == sorted(ticks, key=lambda t: float(t.replace("−", "-")))
    assert overlapping(labels) == []
    assert "On the 4 facts both were asked" in text
    assert all(b["inside"] and 0 < b["labelWidth"] < 300 for b in bars)  # every point and bar on the plot, labels whole
    assert "Compared, paired" in text and "paris" in text and "dated" in text
    assert browser.log.errors() == [] and [u for u in browser.log.requests if not is_local(u, url)] == []
    assert shot.stat().st_size > 20_000
    keep = os.environ.get("CHRONOPROBE_COMPARE_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
