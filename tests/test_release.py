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


def test_version_matches_pyproject_and_the_changelog() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]  # written once, in chronoprobe/version.py
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "chronoprobe.version.__version__"
    declared = re.search(r'^__version__ = "(.+)"$', (ROOT / "src/chronoprobe/version.py").read_text(), re.M)
    assert declared is not None
    newest = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert newest is not None
    assert chronoprobe.__version__ == declared.group(1) == newest.group(1) == "0.2.0"


def test_the_sampler_is_in_the_provenance_and_its_report_section() -> None:
    info = BackendInfo(spec="smollm2", backend="hf", model_id="m", revision="r", sampler="multinomial")
    mock = BackendInfo(spec="mock:echo", backend="mock", model_id="echo", revision="mock")
    provenance = Provenance(models=[info, mock])
    assert [m.sampler for m in provenance.models] == ["multinomial", None]
    section = provenance_section(provenance)
    assert "- sampler: smollm2 multinomial" in section and "mock:echo multinomial" not in section
