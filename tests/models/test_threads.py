"""CPU threads under load: passive OpenMP waiting, and only the cores other processes leave free."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import torch

from chronoprobe import threads
from chronoprobe.errors import ConfigError

BUSY = "import time\nend = time.monotonic() + 6\nwhile time.monotonic() < end:\n    pass\n"


def _env_after_import(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in {"OMP_WAIT_POLICY", threads.ENV}}
    code = "import os, chronoprobe; print(os.environ.get('OMP_WAIT_POLICY'))"
    return subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()


@pytest.mark.e2e
def test_openmp_waits_passively_unless_told_otherwise() -> None:
    assert _env_after_import() == "PASSIVE"
    assert _env_after_import(OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"
    assert _env_after_import(**{threads.ENV: "torch"}) == "None"


def test_threads_for_leaves_the_busy_cores_to_others() -> None:
    assert threads.threads_for(2, 0.1) == 2
    assert threads.threads_for(2, 0.7) == 1
    assert threads.threads_for(2, 5.0) == 1
    assert threads.threads_for(8, 2.2) == 6


def test_bad_policy_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(threads.ENV, "lots")
    with pytest.raises(ConfigError, match=threads.ENV):
        threads.AdaptiveThreads()


def test_fixed_and_torch_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv(threads.ENV, "1")
        assert threads.AdaptiveThreads().adjust() == 1 and torch.get_num_threads() == 1
        torch.set_num_threads(before)
        monkeypatch.setenv(threads.ENV, "torch")
        assert threads.AdaptiveThreads().adjust() is None and torch.get_num_threads() == before
    finally:
        torch.set_num_threads(before)


@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs /proc/stat (Linux)")
def test_auto_keeps_every_core_when_other_processes_are_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """With passive waiting, every core beat the adaptive count under load (docs/scale.md)."""
    monkeypatch.setenv(threads.ENV, "auto")
    before = torch.get_num_threads()
    cores = threads.usable_cores()
    load = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(cores)]
    try:
        time.sleep(0.5)
        policy = threads.AdaptiveThreads()
        time.sleep(1.5)
        assert policy.adjust() == cores and torch.get_num_threads() == cores
    finally:
        for process in load:
            process.kill()
            process.wait()
        torch.set_num_threads(before)


@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs /proc/stat (Linux)")
def test_adaptive_gives_up_cores_that_other_processes_keep_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(threads.ENV, "adaptive")
    before = torch.get_num_threads()
    cores = threads.usable_cores()
    load = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(cores)]
    try:
        time.sleep(0.5)  # the busy loops are running
        adaptive = threads.AdaptiveThreads()
        time.sleep(1.5)
        assert adaptive.adjust() == 1 and torch.get_num_threads() == 1
    finally:
        for process in load:
            process.kill()
            process.wait()
        torch.set_num_threads(before)
