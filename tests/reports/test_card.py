"""``chronoprobe card`` without a browser: the HTML itself (numbers, escaping, self-containment),
lens subsets, and the output file rules. test_card_browser.py loads the same card in Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

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
