"""Every script in benchmarks/ runs at its smallest size, so that a rename breaks a test, not a benchmark.

One small setting for all: a stand-in model of SmolLM2's architecture and tokenizer at a tiny size
with random weights (built by ``benchmarks/gpu_standin.py``, which is its smoke test), one fact or
prompt, one round, two samples. Speeds and scores mean nothing here; what counts is that each
script runs to its end and that its own checks (identical answers, identical metrics) hold. The
Python scripts run one after another in two interpreters side by side (``DRIVER``, two groups of
about equal time), so torch and transformers are imported twice in all. GPU-only scripts run only
where a GPU is.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2}
"""SmolLM2's config at this size: 1.6M parameters, nearly all in the embeddings of its real vocabulary."""
SKELETON_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja")

DRIVER = """
import json, runpy, sys, time, traceback
outcomes = {}
for script, args in json.loads(sys.argv[1]).items():
    sys.argv = [script, *args]
    started = time.perf_counter()
    try:
        runpy.run_path(script, run_name="__main__")
        outcome = "ok"
    except SystemExit as exit:
        outcome = "ok" if not exit.code else f"exit {exit.code}"
    except BaseException:
        outcome = traceback.format_exc(limit=-3)
    outcomes[script] = [outcome, round(time.perf_counter() - started, 1)]
print("OUTCOMES " + json.dumps(outcomes))
"""


def smallest(tiny: str) -> dict[str, list[str]]:
    """Each Python benchmark's arguments at its smallest size (``None``: runs only on a GPU)."""
    model = ["--model", f"hf:{tiny}"]
    return {
        "cache_bytes.py": [*model, "--lens", "outdated,conflicts", "--size", "1"],
        "cached_rerun.py": [*model, "--limit", "1", "--max-ratio", "1"],
        "compare_speed.py": ["--facts", "20", "--repeats", "1", "--max-seconds", "60"],  # no model: two written runs
        "conflicts_speed.py": [*model, "--facts", "1", "--samples", "2"],
        "cpu_backends.py": [*model, "--rounds", "1", "--facts", "1", "--paths", "torch16"],
        "decode_sampling.py": [*model, "--prompts", "1", "--samples", "2", "--tokens", "4"],
        "embedded_speed.py": [*model, "--facts", "1", "--samples", "2"],
        "editing_speed.py": [*model, "--batch", "1", "--rome-edits", "1", "--steps", "1"],
        "engine_ray.py": [*model, "--facts", "1", "--batch-size", "1", "--cpus", "1", "--workers", "1"],
        "outdated_throughput.py": [*model, "--facts", "1", "--phases", "idle", "--settings", "auto"],
        "roofline.py": [*model, "--facts", "1", "--workload", "audit,conflicts"],
        "router_speed.py": [*model, "--questions", "4", "--llm-questions", "1", "--single", "1"],
        "startup.py": ["--repeats", "1"],
    }


GROUPS = (
    {"engine_ray.py", "conflicts_speed.py", "decode_sampling.py", "editing_speed.py", "embedded_speed.py"},
    {
        "cache_bytes.py",
        "cached_rerun.py",
        "outdated_throughput.py",
        "roofline.py",
        "cpu_backends.py",
        "compare_speed.py",
        "router_speed.py",
        "startup.py",
    },
)
"""The two interpreters' shares: Ray's cluster start is in the first."""
GPU_ONLY = {"vllm_throughput.py", "gpu_check.sh"}
ELSEWHERE = {"gpu_standin.py": "builds the stand-in every other script here runs on", "gpu_prepare.sh": "below"}


def has_gpu() -> bool:
    from chronoprobe.models.placement import cuda_available

    return cuda_available()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    folder, _ = converted_gguf(smollm2_gguf())
    skeleton = tmp_path_factory.mktemp("skeleton")
    for name in SKELETON_FILES:
        if (folder / name).is_file():
            shutil.copy2(folder / name, skeleton / name)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (skeleton / "config.json").write_text(json.dumps({**config, **TINY, "num_key_value_heads": 1, "head_dim": 16}))
    out = tmp_path_factory.mktemp("tiny")
    command = [sys.executable, str(BENCHMARKS / "gpu_standin.py"), str(skeleton), str(out)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    assert (out / "model.safetensors").is_file() and (out / "chronoprobe-standin.json").is_file()
    return out


def test_every_benchmark_has_a_smoke_run() -> None:
    scripts = {p.name for p in BENCHMARKS.iterdir() if p.suffix in {".py", ".sh"}}
    assert scripts == set(smallest("x")) | GPU_ONLY | set(ELSEWHERE)


@pytest.mark.slow
def test_every_benchmark_runs_at_its_smallest_size(tiny_model: Path, tmp_path: Path) -> None:
    runs = smallest(str(tiny_model))
    assert set().union(*GROUPS) == set(runs)
    if importlib.util.find_spec("ray") is None:  # the ray extra; tests/engines skips without it too
        del runs["engine_ray.py"]
    env = {**os.environ, "COLUMNS": "200"}
    drivers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                DRIVER,
                json.dumps({str(BENCHMARKS / n): runs[n] for n in sorted(group & set(runs))}),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for group in GROUPS
    ]
    outcomes: dict[str, list[object]] = {}
    for driver in drivers:
        printed, _ = driver.communicate(timeout=600)
        lines = [line for line in printed.splitlines() if line.startswith("OUTCOMES ")]
        assert lines, printed[-4000:]
        outcomes.update(json.loads(lines[-1].removeprefix("OUTCOMES ")))
    print({Path(script).name: seconds for script, (_, seconds) in outcomes.items()})
    failed = {Path(script).name: outcome for script, (outcome, _) in outcomes.items() if outcome != "ok"}
    assert failed == {}


@pytest.mark.e2e
def test_the_gpu_check_says_in_one_line_that_there_is_no_gpu() -> None:
    if has_gpu():
        pytest.skip("a GPU is here: benchmarks/gpu_check.sh is the ten-minute GPU check itself")
    done = subprocess.run(["bash", str(BENCHMARKS / "gpu_check.sh")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "no GPU here" in done.stderr


@pytest.mark.skipif(not has_gpu(), reason="vLLM needs a CUDA GPU")
def test_vllm_throughput_runs_at_its_smallest_size(tiny_model: Path) -> None:
    pytest.importorskip("vllm")
    command = [sys.executable, str(BENCHMARKS / "vllm_throughput.py"), "--model-dir", str(tiny_model)]
    subprocess.run([*command, "--facts", "1", "--repeats", "1", "--min-ratio", "0"], check=True, timeout=600)


@pytest.mark.e2e
def test_gpu_prepare_parses() -> None:
    """It fetches wheels from the package index, so here it is only parsed (``bash -n``)."""
    subprocess.run(["bash", "-n", str(BENCHMARKS / "gpu_prepare.sh")], check=True)
