"""Fixtures for the GPU tests: the model folder they run, and backends loaded once per session.

The model is ``$CHRONOPROBE_GPU_MODEL`` (a transformers folder; ``benchmarks/gpu_check.sh`` sets
it) or else the embedded SmolLM2, converted on first use.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest

NO_CUDA = (
    "no CUDA GPU (torch.cuda.is_available() is False); run benchmarks/gpu_check.sh on a GPU machine (docs/scale.md)"
)
NO_VLLM = "vLLM is not installed (pip install 'chronoprobe[vllm]'); benchmarks/gpu_check.sh can install it from wheels"


def skip_or_fail(reason: str) -> NoReturn:
    """Skip, except under ``CHRONOPROBE_GPU_REQUIRED=1`` (gpu_check.sh), where a GPU test that cannot run fails."""
    if os.environ.get("CHRONOPROBE_GPU_REQUIRED") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        skip_or_fail(NO_CUDA)


@pytest.fixture(scope="session")
def gpu_model_dir() -> Path:
    """Every GPU test needs this fixture, so it is where they skip on a machine without CUDA."""
    require_cuda()
    from chronoprobe.errors import ChronoprobeError

    configured = os.environ.get("CHRONOPROBE_GPU_MODEL")
    if configured:
        folder = Path(configured).expanduser()
        if not (folder / "config.json").is_file():
            pytest.fail(f"CHRONOPROBE_GPU_MODEL={configured} is not a transformers model folder (no config.json)")
        return folder
    try:
        from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

        return converted_gguf(smollm2_gguf())[0]
    except ChronoprobeError as exc:
        skip_or_fail(f"no model to run: set CHRONOPROBE_GPU_MODEL to a transformers folder ({exc})")


@pytest.fixture(scope="session")
def audit_prompts() -> list[Any]:
    """The outdated audit's own prompts: the first 4 facts x 3 paraphrases."""
    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.lenses.outdated.prompts import fact_prompts

    return [p for fact in load_catalogue()[:4] for p in fact_prompts(fact)]


@pytest.fixture(scope="session")
def hf_cuda(gpu_model_dir: Path) -> Any:
    """The hf backend on the GPU, in bfloat16 (what vLLM runs too, so greedy answers can be compared)."""
    from chronoprobe.models.registry import BackendOptions, load_backend

    return load_backend(f"hf:{gpu_model_dir}", BackendOptions(device="cuda", dtype="bfloat16", batch_size=16))


@pytest.fixture(scope="session")
def vllm_backend(gpu_model_dir: Path) -> Any:
    if importlib.util.find_spec("vllm") is None:
        skip_or_fail(NO_VLLM)
    from chronoprobe.models.vllm_backend import VLLMBackend, VLLMConfig

    # A third of the card leaves room for the hf model of the same session.
    return VLLMBackend(
        VLLMConfig(model=str(gpu_model_dir), dtype="bfloat16", gpu_memory_utilization=0.3, spec=f"vllm:{gpu_model_dir}")
    )


@pytest.fixture(scope="session")
def stand_in(gpu_model_dir: Path) -> bool:
    """True for benchmarks/gpu_standin.py's random weights: chaotic enough that bfloat16 rounding
    parts greedy paths, so agreement between engines is reported but not asserted."""
    return (gpu_model_dir / "chronoprobe-standin.json").is_file()
