"""The release is named alike everywhere, and results say how their samples were drawn."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import chronoprobe
from chronoprobe.models.base import BackendInfo
from chronoprobe.provenance import Provenance
from chronoprobe.reports.markdown import provenance_section

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]  # written once, in chronoprobe/version.py
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "chronoprobe.version.__version__"
    declared = re.search(r'^__version__ = "(.+)"$', (ROOT / "src/chronoprobe/version.py").read_text(), re.M)
    assert declared is not None
    assert chronoprobe.__version__ == declared.group(1) == "0.3.0.dev0"


def test_the_changelog_has_one_unreleased_part_above_dated_releases_and_the_version_follows_the_newest() -> None:
    """0.2.0 is released (dated); the package is the next development version, its changes under "Unreleased"."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert sections[0] == "Unreleased" and sections.count("Unreleased") == 1
    assert sections[1:3] == ["[0.2.0] - 2026-12-07", "[0.1.0]"]
    assert not [s for s in sections if "unreleased" in s.lower() and s != "Unreleased"]
    newest = re.fullmatch(r"\[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}", sections[1])
    assert newest is not None
    major, minor, _ = (int(part) for part in newest.groups())
    assert chronoprobe.__version__ == f"{major}.{minor + 1}.0.dev0"  # the next development version
    for part in re.split(r"^## .+$", text, flags=re.M)[2:3]:  # the release: each heading once
        headings = re.findall(r"^### (.+)$", part, re.M)
        assert len(headings) == len(set(headings)), headings


def test_the_sampler_is_in_the_provenance_and_its_report_section() -> None:
    info = BackendInfo(spec="smollm2", backend="hf", model_id="m", revision="r", sampler="multinomial")
    mock = BackendInfo(spec="mock:echo", backend="mock", model_id="echo", revision="mock")
    provenance = Provenance(models=[info, mock])
    assert [m.sampler for m in provenance.models] == ["multinomial", None]
    section = provenance_section(provenance)
    assert "- sampler: smollm2 multinomial" in section and "mock:echo multinomial" not in section
