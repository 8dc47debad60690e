"""``--engine ray``: a local Ray cluster on 127.0.0.1 runs the batches the cache misses.

Mocks registered in this process are not visible in Ray's worker processes; the cluster's
``worker_process_setup_hook`` registers the one mock these tests need there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e  # a local Ray cluster

ray = pytest.importorskip(
    "ray", reason="Ray is not installed (pip install 'chronoprobe[ray]'); the Ray engine is untested"
)

import chronoprobe as cp  # noqa: E402
from chronoprobe.errors import ConfigError  # noqa: E402
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock  # noqa: E402

DIES_ONCE = "dies-once"


def _dies_once(flag: Path) -> Any:
    """An echo whose first call in any process, while ``flag`` is missing, kills that process."""

    def handler(prompt: MockPrompt, params: Any) -> str:
        if not flag.exists():
            flag.write_text(str(os.getpid()))
            os._exit(1)
        return prompt.request.splitlines()[-1]

    return handler


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 2-CPU Ray cluster on 127.0.0.1 for this module; yields the folder of the kill flag."""
    if ray.is_initialized():
        pytest.skip("Ray is already connected in this process")
    # the hook below refers to this module's functions: ship them by value (workers cannot import tests/)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    flags = tmp_path_factory.mktemp("ray-flags")
    flag = flags / "died"

    def setup() -> None:
        from chronoprobe.testing import register_mock

        register_mock(DIES_ONCE, _dies_once(flag))

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        runtime_env={"worker_process_setup_hook": setup},
    )
    try:
        yield flags
    finally:
        ray.shutdown()


def _rows(run: cp.Run) -> list[dict[str, Any]]:
    return [row.model_dump(mode="json") for row in run.rows]


@pytest.mark.slow
def test_an_outdated_run_on_smollm2_through_ray_equals_the_local_engine(cluster: Path, tmp_path: Path) -> None:
    """One fact's three prompts in batches of two: two batches, so both actors of the pool can get one.

    Equality is row by row, so more facts only repeat the check; each of Ray's actors loads the
    model whatever the size, and the two more facts of before cost 8 s of generation.
    """
    common: dict[str, Any] = {"models": "smollm2", "limit": 1, "batch_size": 2, "claimed_cutoff": False}
    local = cp.run("outdated", out=tmp_path / "local", cache=tmp_path / "local.sqlite", **common)
    remote = cp.run("outdated", out=tmp_path / "ray", cache=tmp_path / "ray.sqlite", engine="ray", **common)
    assert _rows(remote) == _rows(local)
    assert remote.summary.headline == local.summary.headline
    assert remote.provenance.engine == "ray" and local.provenance.engine is None
    assert "engine" not in local.provenance.recorded()  # the local engine: no key, as before it was recorded
    calls = (remote.provenance.model_calls_made or {})["smollm2"]
    assert calls == len(remote.rows) == 3  # every prompt was a miss, and ran exactly once


def test_a_run_completes_after_a_worker_actor_dies(cluster: Path, tmp_path: Path) -> None:
    flag = cluster / "died"
    register_mock(DIES_ONCE, _dies_once(flag))  # the driver needs it too, to render and plan
    try:
        remote = cp.run(
            "outdated",
            models=f"mock:{DIES_ONCE}",
            limit=4,
            batch_size=3,
            claimed_cutoff=False,  # the calls are the rows
            out=tmp_path / "ray",
            cache=tmp_path / "ray.sqlite",
            engine="ray",
        )
    finally:
        unregister_mock(DIES_ONCE)
    assert flag.is_file() and int(flag.read_text()) != os.getpid()  # a worker process, not this one, died
    local = cp.run(
        "outdated", models="mock:echo", limit=4, batch_size=3, out=tmp_path / "local", cache=tmp_path / "l.sqlite"
    )
    assert [(r["rendered_prompt"], r["response"]) for r in _rows(remote)] == [
        (r["rendered_prompt"], r["response"]) for r in _rows(local)
    ]
    assert (remote.provenance.model_calls_made or {})[f"mock:{DIES_ONCE}"] == len(remote.rows)


class DriverKilled(Exception):
    pass


def test_a_killed_driver_resumes_from_the_cache(cluster: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    options: dict[str, Any] = {
        "models": "mock:echo",
        "limit": 4,
        "batch_size": 2,
        "cache": cache,
        "engine": "ray",
        "claimed_cutoff": False,  # the calls are the rows
    }
    done: list[int] = []

    def dies_after_two_batches(description: str, total: int) -> Any:
        def tick(k: int) -> None:
            done.append(k)
            if len(done) == 2:
                raise DriverKilled

        return tick

    with pytest.raises(DriverKilled):
        cp.run("outdated", out=tmp_path / "first", progress=dies_after_two_batches, **options)
    from chronoprobe.cache import CallCache

    stored = CallCache(cache).count()
    assert stored == sum(done) == 4  # the two batches that came back before the "kill" were written
    resumed = cp.run("outdated", out=tmp_path / "again", **options)
    assert (resumed.provenance.model_calls_made or {})["mock:echo"] == len(resumed.rows) - stored
    whole = cp.run("outdated", out=tmp_path / "whole", **{**options, "cache": tmp_path / "fresh.sqlite"})
    assert _rows(resumed) == _rows(whole)


def test_an_unreachable_head_is_one_line_before_any_model_loads(tmp_path: Path) -> None:
    chronoprobe = Path(sys.executable).with_name("chronoprobe")
    args = ["outdated", "run", "--model", "mock:echo", "--limit", "1", "--out", str(tmp_path / "run")]
    done = subprocess.run(
        [str(chronoprobe), *args, "--engine", "ray:127.0.0.1:1", "--cache", str(tmp_path / "c.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RAY_ADDRESS": ""},
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, lines  # checked with the option, before the plan or any other line
    assert "--engine" in lines[0] and "no Ray head answers at 127.0.0.1:1" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_the_api_checks_the_head_before_the_lens_loads_or_the_cache_opens(tmp_path: Path) -> None:
    options: dict[str, Any] = {
        "models": "mock:echo",
        "limit": 1,
        "out": tmp_path / "run",
        "cache": tmp_path / "c.sqlite",
    }
    with pytest.raises(ConfigError, match=r"no Ray head answers at 127\.0\.0\.1:1"):
        cp.run("outdated", engine="ray:127.0.0.1:1", **options)
    assert not (tmp_path / "c.sqlite").exists() and not (tmp_path / "run").exists()


def test_editing_refuses_ray_for_weight_methods_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from chronoprobe.cli.main import main

    dataset = (
        Path(__file__).resolve().parents[1]
        / "assets/editing_results/models_editing/editing_datasets/llama2-7b-chat/editing_dataset.json"
    )
    argv = [
        "chronoprobe",
        "editing",
        "run",
        "--dataset",
        str(dataset),
        "--method",
        "rome,ike",
        "--engine",
        "ray",
        "--out",
        str(tmp_path / "e"),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as stopped:
        main()
    text = capsys.readouterr().err
    assert stopped.value.code == 2
    assert " ".join(text.split()).startswith("error: --engine ray: rome edit the weights in this process"), text


def test_a_spec_the_workers_cannot_build_is_one_error_not_a_hang(cluster: Path, tmp_path: Path) -> None:
    register_mock("driver-only", lambda prompt, params: "Paris")  # never registered in the workers
    try:
        with pytest.raises(ConfigError) as caught:
            cp.run(
                "outdated", models="mock:driver-only", limit=1, out=tmp_path / "r", cache=tmp_path / "c", engine="ray"
            )
    finally:
        unregister_mock("driver-only")
    assert str(caught.value).startswith("model spec 'mock:driver-only': no mock named 'driver-only'")
