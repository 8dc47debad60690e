"""A broken lens plug-in fails only its own command, in one line naming it and its distribution.

Each plug-in here is really installed: a module and a ``.dist-info`` folder declaring its
``chronoprobe.lenses`` entry point, written into ``tmp_path`` and put on ``sys.path`` (or on
``PYTHONPATH`` for a CLI in its own process). Its good parts come from ``tests/toy_lens.py``.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe import plugins
from chronoprobe.errors import PluginError
from cli_driver import run_main

pytestmark = pytest.mark.e2e

TESTS = Path(__file__).resolve().parent
MODEL = "mock:constant=It was in 2019."
LABEL = "lens plug-in 'toy' (toy-lens 0.1)"


def install(site: Path, module: str, source: str, target: str | None = None, version: str = "0.1") -> Path:
    """Install distribution ``toy-lens`` into ``site``: ``module.py`` and an entry point ``toy = <target>``."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"toy_lens-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: toy-lens\nVersion: {version}\nSummary: Says whether answers name a year.\n",
        encoding="utf-8",
    )
    entry = target or f"{module}:ToyLens"
    (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\ntoy = {entry}\n", encoding="utf-8")
    importlib.invalidate_caches()
    return site


@dataclass(frozen=True)
class Broken:
    name: str
    source: str
    attribute: str
    expected: str
    """The error line after ``error: lens plug-in 'toy' (toy-lens 0.1) ``."""
    seen_by_help: bool
    """Whether ``--help`` can tell, without running it, that it cannot load."""
    cause: type[BaseException]


BROKEN = [
    Broken(
        "raises",
        "from toy_lens import ToyLens\n\nraise RuntimeError('no network at import')\n",
        "ToyLens",
        "failed to import: RuntimeError: no network at import",
        False,
        RuntimeError,
    ),
    Broken("syntax", "def broken(:\n", "ToyLens", "failed to import: SyntaxError: ", True, SyntaxError),
    Broken(
        "missing-attribute",
        "from toy_lens import ToyLens\n",
        "NoSuchLens",
        "failed to import: AttributeError: ",
        True,
        AttributeError,
    ),
    Broken(
        "exits",
        "import sys\n\nfrom toy_lens import ToyLens\n\nsys.exit(7)\n",
        "ToyLens",
        "failed to import: SystemExit: 7",
        False,
        SystemExit,
    ),
    Broken("not-a-lens", "def ToyLens():\n    pass\n", "ToyLens", "which is <function", False, PluginError),
]


def _module(case: Broken) -> str:
    return "broken_" + case.name.replace("-", "_")


@pytest.fixture
def broken(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Broken:
    case: Broken = request.param
    module = _module(case)
    monkeypatch.syspath_prepend(str(install(tmp_path / "site", module, case.source, f"{module}:{case.attribute}")))
    return case


PLAN_LINE = re.compile(r"^\S+: \d+ \w+, \d+ model calls; ")
"""A lens's plan line (``toy: 3 questions, 3 model calls; about ...``), printed before its first call: a stage that
fails after it still says so in one line of its own."""


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and not PLAN_LINE.match(line)]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("broken", BROKEN, indirect=True, ids=[c.name for c in BROKEN])
def test_a_broken_plugin_fails_its_own_command_and_no_other(
    broken: Broken, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    module = _module(broken)
    shown = run_main(monkeypatch, capsys, "--help", columns=200)
    assert shown.code == 0, shown.text
    assert module not in sys.modules  # listed from its entry point, never imported
    listed = " ".join(shown.out.replace("│", " ").split())
    assert "toy (plug-in, not loaded)" in listed if broken.seen_by_help else "toy Says whether answers" in listed

    assert run_main(monkeypatch, capsys, "models").code == 0
    for own in (("toy", "run", "-m", MODEL), ("toy", "--help")):
        ran = run_main(monkeypatch, capsys, *own)
        assert ran.code == 2
        line = _one_line(ran.err)
        assert line.startswith(f"error: {LABEL} ") and broken.expected in line, line
    assert not (tmp_path / "results").exists()

    with pytest.raises(PluginError) as raised:
        cp.run("toy", models=MODEL, out=tmp_path / "api-run", cache=tmp_path / "calls.sqlite")
    assert str(raised.value).startswith(LABEL) and broken.expected in str(raised.value)
    if broken.cause is not PluginError:
        assert isinstance(raised.value.__cause__, broken.cause)
    assert not (tmp_path / "api-run").exists()


STAGE_FAILS = {
    "run": "    def run(self, model, progress=None):\n        raise ValueError('no answers today')\n",
    "report": "    def report(self, folder, rows, summary, provenance):\n        raise SystemExit(7)\n",
    "load": "    def load(self):\n        raise KeyError('questions')\n",
}


@pytest.mark.parametrize("stage", sorted(STAGE_FAILS))
def test_an_error_in_a_plugins_stage_is_blamed_on_the_plugin(
    stage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = f"stage_{stage}"
    source = f"from toy_lens import ToyLens as Good\n\n\nclass ToyLens(Good):\n{STAGE_FAILS[stage]}"
    monkeypatch.syspath_prepend(str(install(tmp_path / "site", module, source)))
    out = tmp_path / "run"
    ran = run_main(
        monkeypatch, capsys, "toy", "run", "-m", MODEL, "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)
    )
    line = _one_line(ran.err)
    assert ran.code == 2 and line.startswith(f"error: {LABEL} failed in {stage}(): "), line
    assert "internal error" not in line and "chronoprobe bug" not in line
    assert not out.exists() and not list(tmp_path.glob(".run*"))
    with pytest.raises(PluginError, match=rf"failed in {stage}\(\)") as raised:
        cp.run("toy", models=MODEL, out=out, cache=tmp_path / "c.sqlite")
    assert isinstance(raised.value.__cause__, (ValueError, SystemExit, KeyError))
    assert raised.value.__cause__ is not None and type(raised.value.__cause__).__name__ in line


def test_a_folder_a_plugin_wrote_fails_to_load_in_one_line_once_the_plugin_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site = install(tmp_path / "site", "later_broken", "from toy_lens import ToyLens\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "toy-run"
    cp.run("toy", models=MODEL, out=out, cache=tmp_path / "c.sqlite")
    other = cp.run(
        "outdated", models="mock:constant=Paris", limit=1, out=tmp_path / "audit", cache=tmp_path / "c.sqlite"
    )

    # the next release of the plug-in raises on import
    install(site, "later_broken", "raise ImportError('needs a newer numpy')\n", version="0.1")
    monkeypatch.delitem(sys.modules, "later_broken")
    with pytest.raises(PluginError, match="failed to import: ImportError: needs a newer numpy"):
        cp.load(out)
    ran = run_main(monkeypatch, capsys, "card", str(out), "--out", str(tmp_path / "card.html"))
    assert ran.code == 2 and _one_line(ran.err).startswith(f"error: {LABEL} failed to import: ImportError")
    assert not (tmp_path / "card.html").exists()
    # what the plug-in did not write still reads, and results reads its records without importing it
    assert cp.load(other.path).lens == "outdated"
    assert run_main(monkeypatch, capsys, "card", str(other.path), "--out", str(tmp_path / "c2.html")).code == 0
    assert run_main(monkeypatch, capsys, "results", str(out), str(other.path)).code == 0
    assert run_main(monkeypatch, capsys, "outdated", "run", "--help").code == 0


def test_a_plugin_that_exits_on_import_breaks_no_other_command_in_a_fresh_process(tmp_path: Path) -> None:
    site = install(tmp_path / "site", "exits_on_import", "import sys\n\nfrom toy_lens import ToyLens\n\nsys.exit(7)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "chronoprobe", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=120)

    shown = cli("--help")
    assert shown.returncode == 0 and "toy" in shown.stdout, shown.stderr
    assert cli("models").returncode == 0
    own = cli("toy", "run", "-m", MODEL)
    assert own.returncode == 2
    assert _one_line(own.stderr) == f"error: {LABEL} failed to import: SystemExit: 7"
