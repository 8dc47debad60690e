"""Hub datasets need the optional `datasets` package: without it, one line says how to get it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from chronoprobe.datasets import mulan
from chronoprobe.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]

# Runs the CLI in a process where `import datasets` fails, as on an install without the extra.
WITHOUT_DATASETS = "import sys; sys.modules['datasets'] = None; from chronoprobe.cli.main import main; main()"


def test_the_hub_extra_declares_datasets() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(req.startswith("datasets") for req in project["optional-dependencies"]["hub"])


def test_missing_datasets_is_a_config_error_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(ConfigError, match=r"pip install 'chronoprobe\[hub\]'"):
        mulan.load_queries(mulan.QUERIES_HUB_ID)


@pytest.mark.e2e
def test_cli_without_datasets_prints_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_DATASETS,
            "conflicts",
            "contexts",
            "--out",
            str(tmp_path / "c.jsonl"),
            "--cache",
            str(tmp_path / "calls.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "chronoprobe[hub]" in lines[0] and "coastalcph/fm_queries" in lines[0], done.stderr
