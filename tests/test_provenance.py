"""What a run records about how it ran: CPU threads torch used, parameters of local models."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import torch

from chronoprobe import threads
from chronoprobe.api import run
from chronoprobe.provenance import build_provenance


@pytest.fixture
def torch_threads() -> Any:
    """Leaves torch's thread count as the test found it."""
    before = torch.get_num_threads()
    yield before
    torch.set_num_threads(before)


@pytest.mark.e2e
def test_a_mock_run_records_the_thread_policy_and_no_torch_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(threads.ENV, "3")
    result = run("outdated", "mock:constant=Paris", limit=1, out=tmp_path / "run", cache=tmp_path / "calls.sqlite")
    # the mock runs no torch work: the policy and the cores are recorded, no torch thread count
    assert result.provenance.threads is not None
    assert result.provenance.threads.model_dump() == {"policy": "3", "cores": threads.usable_cores(), "torch": []}
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert f"- CPU threads: no local model ran on the CPU (policy 3, {threads.usable_cores()} cores)" in report


def test_the_thread_counts_torch_ran_with_during_the_run(monkeypatch: pytest.MonkeyPatch, torch_threads: int) -> None:
    monkeypatch.setenv(threads.ENV, "1")
    threads.AdaptiveThreads().adjust()  # work before the run started is not the run's
    started = time.perf_counter()
    assert build_provenance([], started=started).threads.torch == []  # type: ignore[union-attr]
    threads.AdaptiveThreads().adjust()
    assert build_provenance([], started=started).threads.torch == [1]  # type: ignore[union-attr]
    monkeypatch.setenv(threads.ENV, "torch")
    torch.set_num_threads(2)
    threads.AdaptiveThreads().adjust()  # torch decides: what it used is still recorded
    recorded = build_provenance([], started=started).threads
    assert recorded is not None and recorded.torch == [1, 2] and recorded.policy == "torch"


@pytest.mark.slow
def test_hf_models_record_their_parameters_and_threads(
    smollm2: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torch_threads: int
) -> None:
    """The embedded SmolLM2-135M, and the same weights loaded as an ``hf:`` folder."""
    embedded = int(smollm2.info.extra["parameters"])
    assert 134_000_000 < embedded < 135_000_000  # SmolLM2-135M: 134.5M, the tied embedding counted once
    monkeypatch.setenv(threads.ENV, "1")
    spec = f"hf:{smollm2.config.model}"  # the converted safetensors folder, read from where the fixture put it
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    result = run("outdated", spec, limit=1, out=tmp_path / "run", cache=tmp_path / "calls.sqlite")
    [info] = result.provenance.models
    assert info.spec == spec and int(info.extra["parameters"]) == embedded
    assert result.provenance.threads is not None and result.provenance.threads.torch == [1]
    assert "- CPU threads: torch ran with 1 (policy 1," in (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
