"""``chronoprobe card`` without a browser: the HTML itself (numbers, escaping, self-containment),
lens subsets, and the output file rules. test_card_browser.py loads the same card in Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from summary_values import expected


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.sections: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        found = {k: v or "" for k, v in attrs}
        if "data-metric" in found:
            self.cells.append({k[5:]: v for k, v in found.items() if k.startswith("data-")})
        for key in ("src", "href"):
            if key in found:
                self.urls.append(found[key])
        if tag == "section":
            self.sections.append(found.get("id", ""))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _card(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", "card", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.e2e
def test_card_numbers_equal_the_summaries_and_nothing_is_fetched(run_folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "card.html"
    done = _card(str(run_folders["root"]), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert html.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta name="generator" content="chronoprobe ')
    assert "Content-Security-Policy" in html and "<script" not in html
    page = _parse(out)
    assert page.sections == ["outdated", "conflicts", "recency"]
    assert page.urls and all(u.startswith(("data:", "#")) for u in page.urls)
    folders = {str(path): path for path in run_folders.values()}
    for cell in page.cells:
        value, n = expected(folders[cell["run"]], cell["model"], cell["class"], cell["metric"])
        assert (None if cell["value"] == "" else float(cell["value"])) == value, cell
        assert (None if cell["n"] == "" else int(cell["n"])) == n, cell
    plots = [u for u in page.urls if u.startswith("data:image/")]
    assert any(u.startswith("data:image/svg+xml;base64,") for u in plots)  # outdated's SVGs
    assert any(u.startswith("data:image/png;base64,") for u in plots)  # conflicts' and recency's PNGs


@pytest.mark.e2e
def test_any_subset_of_lenses(run_folders: dict[str, Path], tmp_path: Path) -> None:
    for folders, sections in [
        ([run_folders["mulan"]], ["conflicts"]),
        ([run_folders["recency"], run_folders["score"]], ["outdated", "recency"]),
    ]:
        out = tmp_path / "card.html"
        done = _card(*map(str, folders), "--out", str(out))
        assert done.returncode == 0, done.stderr
        page = _parse(out)
        assert page.sections == sections
        assert {c["run"] for c in page.cells} == {str(f) for f in folders}


@pytest.mark.e2e
def test_text_from_the_folders_is_escaped(run_folders: dict[str, Path], tmp_path: Path) -> None:
    odd = tmp_path / '<script>alert(1)</script> & "q"'
    shutil.copytree(run_folders["mulan"], odd)
    out = tmp_path / "card.html"
    done = _card(str(odd), "--out", str(out))
    assert done.returncode == 0, done.stderr
    page = _parse(out)
    assert "script" not in page.tags
    assert any("<script>alert(1)</script>" in t for t in page.text)  # shown as text
    assert {c["run"] for c in page.cells} == {str(odd)}  # attribute values round-trip


@pytest.mark.e2e
def test_output_file_rules(run_folders: dict[str, Path], tmp_path: Path) -> None:
    notes = tmp_path / "notes.html"
    notes.write_text("<html>my own page</html>")
    done = _card(str(run_folders["mulan"]), "--out", str(notes))
    assert done.returncode == 2 and "not a chronoprobe card" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert notes.read_text() == "<html>my own page</html>"

    card = tmp_path / "sub" / "card.html"  # a missing parent folder is created
    assert _card(str(run_folders["mulan"]), "--out", str(card)).returncode == 0
    first = card.read_text()
    assert _card(str(run_folders["recency"]), "--out", str(card)).returncode == 0  # an earlier card is replaced
    assert card.read_text() != first and 'id="recency"' in card.read_text()
    assert [p.name for p in card.parent.iterdir()] == ["card.html"]  # no temporary files left

    folder = _card(str(run_folders["mulan"]), "--out", str(tmp_path))
    assert folder.returncode == 2 and "is a folder" in folder.stderr
    missing = _card(str(tmp_path / "none"), "--out", str(tmp_path / "x.html"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr
    assert not (tmp_path / "x.html").exists()


@pytest.mark.e2e
def test_headline_cells_show_value_interval_and_n(run_folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "card.html"
    assert _card(str(run_folders["outdated"]), "--out", str(out)).returncode == 0
    html = out.read_text(encoding="utf-8")
    cell = re.search(
        r'<td class="num" [^>]*data-model="dated" data-metric="soft_constraint_pct\.up-to-date"[^>]*>(.*?)</td>', html
    )
    assert cell is not None
    text = re.sub(r"<[^>]+>", " ", cell.group(1))
    assert " ".join(text.split()) == "25.0% [4.6, 69.9] n=4"


@pytest.mark.e2e
def test_editing_methods_go_by_their_report_names(run_folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "card.html"
    done = _card(str(run_folders["editing"]), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    page = _parse(out)
    assert page.sections == ["editing"]
    labels = re.findall(r'<th scope="row" class="metric">([^<]*)</th>', html)
    assert "harmonic mean of efficacy and paraphrase · IKE" in labels  # DyKnow's IKE, the ike-null run
    assert "soft constraint · RAG gold" in labels and "soft constraint · unedited" in labels
    assert not [label for label in labels if "ike-null" in label or "rag-gold" in label]
    # the cells keep the machine-readable keys, and their numbers are the summary's
    headline = [c for c in page.cells if c["metric"] == "ike-null.harmonic_mean_pct" and c["class"] == "all"]
    assert headline
    for cell in page.cells:
        value, n = expected(run_folders["editing"], cell["model"], cell["class"], cell["metric"])
        assert (None if cell["value"] == "" else float(cell["value"])) == value, cell
        assert (None if cell["n"] == "" else int(cell["n"])) == n, cell


def _two_runs_of_one_model(run_folders: dict[str, Path], tmp_path: Path) -> Path:
    """The same outdated run twice, as two folders: two runs of the same models, told apart by folder and date."""
    root = tmp_path / "results"
    for name, created in (("monday", "2026-11-30T09:15:00+00:00"), ("tuesday", "2026-12-01T17:40:00+00:00")):
        folder = root / name
        shutil.copytree(run_folders["outdated"], folder)
        log = folder / "run.json"
        log.write_text(re.sub(r'"created": "[^"]+"', f'"created": "{created}"', log.read_text(encoding="utf-8")))
    return root


@pytest.mark.e2e
def test_two_runs_of_one_model_are_labelled_and_keep_their_plots_together(
    run_folders: dict[str, Path], tmp_path: Path
) -> None:
    from chronoprobe.reports.card import render_card
    from chronoprobe.reports.tidy_table import find_runs

    runs = find_runs([_two_runs_of_one_model(run_folders, tmp_path)]).runs
    html = render_card(runs)
    # each column names its run: the folder and when it ran
    assert html.count("monday · 2026-11-30 09:15") >= 3 and html.count("tuesday · 2026-12-01 17:40") >= 3
    # each run's plots sit in one block of their own, headed by its models and label
    blocks = re.findall(
        r'<div class="run-plots" id="([^"]+)-plots"><h4 class="run-head">(.*?)</h4>(.*?)</div></div>', html
    )
    assert [anchor for anchor, _, _ in blocks] == [f"run-{_slug(str(run.label))}" for run in runs]
    for (_, head, figures), run in zip(blocks, runs, strict=True):
        assert Path(run.label).name in head and "dated, paris" in head
        assert figures.count("<figure>") == len(run.plots)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@pytest.mark.e2e
def test_the_card_opens_with_a_table_of_contents(run_folders: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "card.html"
    done = _card(str(run_folders["root"]), str(run_folders["editing"]), "--out", str(out))
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    contents = html[html.index('<nav class="toc"') : html.index("</nav>", html.index('<nav class="toc"'))]
    assert html.index('<nav class="toc"') < html.index('<section class="lens"')
    for lens in ("outdated", "conflicts", "recency", "editing"):
        assert f'href="#{lens}"' in contents and f'<section class="lens" id="{lens}">' in html
    ids = set(re.findall(r'id="([^"]+)"', html))
    links = re.findall(r'href="#([^"]+)"', contents)
    assert len(links) > 10 and set(links) <= ids  # every entry leads somewhere


@pytest.mark.e2e
def test_the_editing_section_has_a_plot_of_every_method(run_folders: dict[str, Path], tmp_path: Path) -> None:
    assert (run_folders["editing"] / "methods.svg").is_file() and (run_folders["editing"] / "methods.png").is_file()
    assert "![every method over every edited fact](methods.png)" in (run_folders["editing"] / "report.md").read_text()
    out = tmp_path / "card.html"
    assert _card(str(run_folders["editing"]), "--out", str(out)).returncode == 0
    section = out.read_text(encoding="utf-8").split('<section class="lens" id="editing">', 1)[1]
    assert 'alt="methods"' in section


def test_a_png_is_shown_at_the_resolution_it_was_drawn_at(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from chronoprobe.reports.card import png_display_size

    fig = Figure(figsize=(5.0, 2.5))
    fig.subplots().plot([0, 1])
    for dpi in (96, 160):
        path = tmp_path / f"at{dpi}.png"
        fig.savefig(path, dpi=dpi)
        assert png_display_size(path.read_bytes()) == (480, 240)  # 5 x 2.5 inches at 96 CSS px per inch
    assert png_display_size(b"not a png") is None
