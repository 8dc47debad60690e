"""A backend is one module plus one registration line: ``year_backend.py`` lives only in tests/, and
``BACKENDS["year"] = "year_backend:YEAR"`` makes ``--model year:2019`` work on the command line and in
``chronoprobe.run``, with its own option, its spec form in ``chronoprobe models`` and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chronoprobe as cp
from chronoprobe.errors import ConfigError
from chronoprobe.models import registry
from cli_driver import run_main, run_ok

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def year_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(registry.BACKENDS, "year", "year_backend:YEAR")  # the one registration line


def _answers(folder: Path) -> set[str]:
    lines = (folder / "items.jsonl").read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["response"] for line in lines}


@pytest.mark.e2e
def test_a_backend_from_tests_runs_through_chronoprobe_run(tmp_path: Path, year_backend: None) -> None:
    run = cp.run("outdated", models="y=year:2019", limit=2, out=tmp_path / "run", cache=tmp_path / "c.sqlite")
    [info] = run.provenance.models
    assert (info.backend, info.spec, info.name, info.batch_size) == ("year", "year:2019", "y", 4)
    assert _answers(tmp_path / "run") == {"It was in 2019."}
    again = cp.run(
        "outdated", models="year:2020", limit=1, suffix="!", batch_size=2, out=tmp_path / "two", cache=tmp_path / "c"
    )
    assert _answers(tmp_path / "two") == {"It was in 2020!"}  # its own option, taken by name
    assert again.provenance.models[0].batch_size == 2 and again.provenance.models[0].name == "2020"


@pytest.mark.e2e
def test_a_backend_from_tests_runs_on_the_command_line(
    tmp_path: Path, year_backend: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["outdated", "run", "-m", "year:2021", "--limit", "1", "--batch-size", "3"]
    run_ok(monkeypatch, capsys, *args, "--cache", str(tmp_path / "c.sqlite"), "--out", str(out))
    assert _answers(out) == {"It was in 2021."}
    [model] = json.loads((out / "run.json").read_text(encoding="utf-8"))["provenance"]["models"]
    assert (model["backend"], model["batch_size"]) == ("year", 3)
    assert "year:<YYYY>" in run_ok(monkeypatch, capsys, "models")
    bad = run_main(monkeypatch, capsys, "outdated", "run", "-m", "year:19", "--out", str(tmp_path / "bad"))
    assert bad.code == 2 and "model spec 'year:19': expected year:<YYYY>" in bad.err
    assert not (tmp_path / "bad").exists()


def test_an_unregistered_kind_names_the_registered_ones(year_backend: None) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown backend 'yaer'; known: hf, .*, year, smollm2.*did you mean year:2019"
    ):
        registry.parse_model_spec("yaer:2019")
    with pytest.raises(ConfigError, match=r"^backend option\(s\) suffixes: unknown; known: .*, suffix, "):
        registry.BackendOptions(suffixes="!")


def test_one_option_name_has_one_type_across_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = registry.option_fields()
    assert fields["batch_size"] == registry.backend_kind("hf").options.model_fields["batch_size"].rebuild_annotation()
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(registry.BACKENDS, "clash", "year_backend:CLASH")
    with pytest.raises(ConfigError, match="backend option batch_size"):
        registry.option_fields()


@pytest.mark.e2e
def test_every_registration_reads_without_importing_a_backend_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from chronoprobe.models import registry as r; r.known_specs(); r.option_fields(); "
        "[r.parse_model(s) for s in ('smollm2', 'hf:org/m', 'openai:m@http://h/v1', 'vllm:org/m', 'mock:echo')]; "
        "print(sorted({'torch', 'transformers', 'httpx', 'llama_cpp', 'vllm'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
