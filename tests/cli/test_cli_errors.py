"""Bad input gets one line naming the place, a non-zero exit, and no report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chronoprobe.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "nonsense"], "model spec 'nonsense'"),
        (["--model", "gguf:/no/such/file.gguf"], "GGUF file /no/such/file.gguf does not exist"),
        (["--model", "hf:/no/such/folder"], "no model folder at /no/such/folder"),
        (["--model", "vllm:org/model"], "pip install 'chronoprobe[vllm]'"),
        (["--model", "openai:gpt@ftp://x"], "openai:<model name>@<http(s) base url>"),
        (["--snapshot", "no-such-snapshot"], "snapshot 'no-such-snapshot'"),
        (["--as-of", "2024-02-30"], "--as-of"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, expected):
    out = tmp_path / "report"
    result = run_cli("outdated", "run", "--limit", "1", "--out", str(out), "--cache", str(tmp_path / "c.sqlite"), *args)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and expected in lines[0]
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_malformed_catalogue_row_names_file_and_row(tmp_path):
    catalogue = tmp_path / "facts.json"
    catalogue.write_text(json.dumps({"facts": [{"fact_id": "x", "category": "countries_byGDP"}]}))
    result = run_cli("outdated", "run", "--facts", str(catalogue), "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert str(catalogue) in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "r").exists()


def test_refuses_to_replace_an_unrelated_folder(tmp_path):
    (tmp_path / "keep.txt").write_text("precious")
    result = run_cli("outdated", "run", "--limit", "1", "--out", str(tmp_path), "--cache", str(tmp_path / "c.sqlite"))
    assert result.returncode == 2 and "refusing to replace" in result.stderr
    assert (tmp_path / "keep.txt").read_text() == "precious"


def test_models_lists_every_backend():
    result = run_cli("models")
    assert result.returncode == 0
    for kind in ("smollm2", "hf:", "gguf:", "openai:", "vllm:"):
        assert kind in result.stdout
