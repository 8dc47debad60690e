"""A backend from another package: one ``chronoprobe.backends`` entry point naming its ``BackendKind``.

The distribution here is really installed: a ``.dist-info`` folder declaring the entry point, written into
``tmp_path`` and put on ``sys.path``; its backend is ``tests/year_backend.py``. A broken one fails only the
commands whose ``--model`` names its kind, in one line naming the entry point and its distribution.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe import plugins
from chronoprobe.errors import PluginError
from chronoprobe.models import registry
from cli_driver import run_main

pytestmark = pytest.mark.e2e  # runs the CLI and the API end to end

TESTS = Path(__file__).resolve().parent
LABEL = "backend plug-in 'year' (year-backend 0.1)"
SAYS_A_YEAR = "mock:constant=It was in 2019."


def install(site: Path, target: str, kind: str = "year") -> None:
    """Install distribution ``year-backend`` into ``site``, its entry point ``<kind> = <target>``."""
    info = site / "year_backend-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: year-backend\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{plugins.BACKEND_GROUP}]\n{kind} = {target}\n", encoding="utf-8")
    importlib.invalidate_caches()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(TESTS))  # year_backend.py
    monkeypatch.syspath_prepend(str(folder))  # the distribution: a new sys.path, so the entry points are read again
    return folder


def _answers(folder: Path) -> set[str]:
    lines = (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["response"] for line in lines}


def test_an_entry_point_backend_runs_with_its_own_option(site: Path, tmp_path: Path) -> None:
    install(site, "year_backend:YEAR")
    assert registry.registered_backends()["year"] == "year_backend:YEAR"
    assert list(registry.registered_backends())[: len(registry.BACKENDS)] == list(registry.BACKENDS)  # built-ins first
    assert "year:<YYYY>" in [form for form, _ in registry.known_specs()]
    run = cp.run("outdated", "year:2019", limit=1, suffix="!", out=tmp_path / "run", cache=tmp_path / "c.sqlite")
    assert _answers(tmp_path / "run") == {"It was in 2019!"}
    assert run.provenance.models[0].backend == "year"


def test_an_entry_point_backends_own_option_reaches_the_command_line(site: Path, tmp_path: Path) -> None:
    """Its options model is its declaration: ``--suffix`` is offered by every command that loads models, its
    docstring the help, and reaches the backend (a new process: the CLI reads the backends when it starts)."""
    install(site, "year_backend:YEAR")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "run"
    args = ["outdated", "run", "-m", "year:2019", "--limit", "1", "--suffix", "!", "--cache", str(tmp_path / "c")]
    done = subprocess.run(
        [sys.executable, "-m", "chronoprobe", *args, "--out", str(out)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert _answers(out) == {"It was in 2019!"}
    shown = subprocess.run(
        [sys.executable, "-m", "chronoprobe", "recency", "label", "--help"],
        env={**env, "COLUMNS": "200"},
        capture_output=True,
        text=True,
    )
    assert "--suffix" in shown.stdout and "year: What ends every answer" in shown.stdout, shown.stdout


def test_a_built_in_kind_is_not_replaced_by_an_entry_point(site: Path) -> None:
    install(site, "year_backend:YEAR", kind="mock")
    assert registry.registered_backends()["mock"] == registry.BACKENDS["mock"]
    assert registry.parse_model(SAYS_A_YEAR).spec.kind == "mock"


def test_a_broken_backend_plugin_fails_only_the_commands_that_name_it(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (site / "broken_year.py").write_text("raise RuntimeError('no GPU here')\n", encoding="utf-8")
    install(site, "broken_year:YEAR")
    with pytest.raises(PluginError) as raised:
        registry.parse_model("year:2019")
    assert str(raised.value) == f"{LABEL} failed to import: RuntimeError: no GPU here"
    assert isinstance(raised.value.__cause__, RuntimeError)

    named = run_main(monkeypatch, capsys, "outdated", "run", "-m", "year:2019", "--out", str(tmp_path / "never"))
    assert named.code == 2 and named.err.strip() == f"error: {LABEL} failed to import: RuntimeError: no GPU here"
    assert not (tmp_path / "never").exists()

    # every other command and model works: the broken kind is left out of the list of specs
    listed = run_main(monkeypatch, capsys, "models")
    assert listed.code == 0 and "mock:" in listed.out and "year:" not in listed.out
    args = ("outdated", "run", "-m", SAYS_A_YEAR, "--limit", "1", "--cache", str(tmp_path / "c.sqlite"))
    other = run_main(monkeypatch, capsys, *args, "--out", str(tmp_path / "run"))
    assert other.code == 0, other.text
    assert _answers(tmp_path / "run") == {"It was in 2019."}
