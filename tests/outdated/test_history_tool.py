"""``chronoprobe history`` from Python (``cp.produce("history", ...)``): the command's tool, on a mock audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.errors import ConfigError

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `outdated run` of two constant models: one never knows, one always names France's president.
    (Short names that are not specs: the default folder is named after the names the run recorded.)"""
    tmp = tmp_path_factory.mktemp("history")
    models = ["unsure=mock:constant=I do not know", "macron=mock:constant=Emmanuel Macron"]
    return cp.run("outdated", models=models, out=tmp / "audit", cache=tmp / "calls.sqlite").path


def test_history_from_python_writes_the_default_folder(
    audit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = cp.produce("history", dirs=[audit], only_model="unsure")
    [point] = found.points  # --only-model unsure: the other model left out
    assert (point.name, point.snapshot, found.changes) == ("unsure", "dyknow-2023-12-18", [])
    shares = {verdict: (metric.value, metric.n) for verdict, metric in point.shares.items()}
    assert shares == {"up-to-date": (0.0, 130), "outdated": (0.0, 130), "irrelevant": (100.0, 130)}
    [folder] = (tmp_path / "results" / "history").iterdir()
    assert folder.name.startswith("unsure-")
    assert {p.name for p in folder.iterdir()} >= {"history.md", "history.json", "history.png"}
    assert json.loads((folder / "history.json").read_text())["points"][0]["name"] == "unsure"


def test_history_replaces_its_own_folder_and_refuses_an_input(audit: Path, tmp_path: Path) -> None:
    out = tmp_path / "history"
    first = cp.produce("history", dirs=[audit], out=out)
    assert [p.name for p in first.points] == ["macron", "unsure"]  # by model name
    again = cp.produce("history", dirs=[audit], out=out, only_model=("macron",))
    assert [p["name"] for p in json.loads((out / "history.json").read_text())["points"]] == ["macron"]
    assert [p.name for p in again.points] == ["macron"]
    with pytest.raises(ConfigError, match=r"^--out .*: is the DIR input "):
        cp.produce("history", dirs=[audit], out=audit)
