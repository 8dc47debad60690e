"""The top-level CLI: --version, and the model spec forms in help and README."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "250"},
    )


@pytest.mark.e2e
def test_version() -> None:
    done = _run("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"chronoprobe {version('chronoprobe')}"


@pytest.mark.e2e
def test_model_help_lists_every_backend_and_names() -> None:
    done = _run("outdated", "run", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.replace("│", " ").split())
    for form in ("smollm2", "hf:<id>", "gguf:<file>", "vllm:<id>", "openai:<name>@<url>", "NAME=SPEC"):
        assert form in text, form
    assert "NAME=SPEC" in _run("models").stdout


def test_readme_shows_vllm_and_named_specs() -> None:
    text = README.read_text(encoding="utf-8")
    assert "--model vllm:" in text and "--model qwen=hf:" in text
