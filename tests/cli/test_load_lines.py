"""A piped run is never silent for long: its plan line before any model loads, then a line when a model starts
loading and one when it is done (with its time), wherever the load happens: at once, or, for a model the call
cache remembers, on its first cache miss in the middle of the run."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from chronoprobe.cache import CallCache
from chronoprobe.contract import runner
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.registry import BackendOptions, ModelRequest, load_backend
from chronoprobe.progress_lines import PROGRESS_EVERY_ENV, line_if_slow, slow_step_lines
from cli_driver import run_main


def _index(lines: list[str], pattern: str) -> int:
    found = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    assert found, f"no line matches {pattern!r} in:\n" + "\n".join(lines)
    return found[0]


@pytest.mark.e2e
def test_a_piped_run_tells_the_load_and_its_plan_before_its_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """stderr is captured, not a terminal; with the progress interval 0 every step is told at once. The mock
    stands in for a local model (one the call cache remembers once it has loaded it)."""
    monkeypatch.setenv(PROGRESS_EVERY_ENV, "0")
    monkeypatch.setattr("chronoprobe.models.preview.load_key", lambda request, options: "a local model")
    spec, cache = "mock:constant=Paris", str(tmp_path / "c.sqlite")

    def run(limit: int, out: str) -> list[str]:
        args = [
            "outdated",
            "run",
            "--model",
            spec,
            "--limit",
            str(limit),
            "--cache",
            cache,
            "--out",
            str(tmp_path / out),
        ]
        ran = run_main(monkeypatch, capsys, *args)
        assert ran.code == 0, ran.text
        return ran.err.splitlines()

    def plan(facts: int) -> str:
        return rf"outdated: {facts} facts, {3 * facts + 3} model calls; about .+; answers already in the call cache are"

    loading, loaded = re.escape(f"loading {spec} ...") + "$", re.escape(f"loading {spec}: done in ") + r"\d+\.\d s$"
    progress = re.escape(spec) + r": \d+/\d+ \("
    # never loaded: it loads at once, then the plan line, then the run
    lines = run(2, "first")
    assert _index(lines, loading) < _index(lines, loaded) < _index(lines, plan(2)) < _index(lines, progress)
    # remembered: the plan line before it loads, on its first cache miss, inside the run
    lines = run(3, "second")
    assert _index(lines, plan(3)) < _index(lines, loading) < _index(lines, loaded)
    finished = [i for i, line in enumerate(lines) if line.startswith(f"{spec}: 12/12 (100%)")]  # and 3 on its cutoff
    assert finished and _index(lines, loaded) < finished[-1]


def test_a_remembered_model_is_announced_when_it_loads_in_the_middle_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model the cache remembers loads on its first cache miss (models/lazy.py): the lines come then."""
    told: list[str] = []

    @contextmanager
    def announce(message: str) -> Iterator[None]:
        told.append(f"start {message}")
        yield
        told.append(f"end {message}")

    monkeypatch.setattr(
        "chronoprobe.models.preview.load_key", lambda request, options: "remembered"
    )  # as a local model
    loads: list[str] = []

    def load(request: ModelRequest, options: BackendOptions):  # the real mock, counted
        loads.append(request.spec.raw)
        return load_backend(request, options)

    monkeypatch.setattr(runner, "load_backend", load)
    cache = CallCache(tmp_path / "c.sqlite")
    try:
        runner.load_models(["mock:echo"], BackendOptions(), cache, announce)  # never seen: loads at once
        assert (loads, told) == (["mock:echo"], ["start loading mock:echo", "end loading mock:echo"])
        told.clear()
        [model] = runner.load_models(["mock:echo"], BackendOptions(), cache, announce)  # remembered: not yet
        assert not model.loaded and told == [] and len(loads) == 1
        model.generate([Prompt(text="Paris?")], DecodingParams())  # a cache miss: it loads now
        assert model.loaded and len(loads) == 2
        assert told == ["start loading mock:echo", "end loading mock:echo"]
    finally:
        cache.close()


@pytest.mark.e2e
def test_a_slow_step_is_told_within_a_second_and_when_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROGRESS_EVERY_ENV, raising=False)
    lines: list[str] = []
    with slow_step_lines(lines.append, "loading smollm2"):
        pass  # a quick load (a mock, a remote endpoint): no line at all
    assert lines == []
    with slow_step_lines(lines.append, "loading smollm2"):
        deadline = time.monotonic() + 5
        while not lines and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lines == ["loading smollm2 ..."]  # told while it still loads, long before the 10 s interval
    assert re.fullmatch(r"loading smollm2: done in \d+\.\d s", lines[-1]) and len(lines) == 2


def test_a_step_that_fails_gets_no_done_line() -> None:
    lines: list[str] = []
    with pytest.raises(RuntimeError), line_if_slow(lines.append, "loading x ...", 0.0, closing=lambda s: "done"):
        raise RuntimeError("no such model")
    assert lines == ["loading x ..."]  # its error says the rest


def test_the_start_line_is_written_whole_before_the_done_line() -> None:
    """The timer's line and the step's end can meet: the end waits for the line being written."""
    lines: list[str] = []
    writing = threading.Event()

    def slow_emit(line: str) -> None:
        writing.set()
        time.sleep(0.2)
        lines.append(line)

    with line_if_slow(slow_emit, "loading x ...", 0.01, closing=lambda s: "loading x: done"):
        writing.wait(2)
    assert lines == ["loading x ...", "loading x: done"]
