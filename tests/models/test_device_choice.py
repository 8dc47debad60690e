"""--device names a device this machine has, or the run stops with one line before any weights load."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import BackendOptions, load_backend


@pytest.fixture
def config_only(tmp_path: Path) -> Path:
    """A tiny GPT-2 config and no weights: loading must fail on the device before it looks for any."""
    from transformers import GPT2Config

    folder = tmp_path / "tiny-gpt2"
    GPT2Config(n_embd=8, n_layer=1, n_head=2, vocab_size=64).save_pretrained(folder)
    return folder


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cuda_device_without_a_gpu_is_a_one_line_error(config_only: Path, device: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_backend(f"hf:{config_only}", BackendOptions(device=device))
    message = str(caught.value)
    assert "\n" not in message
    assert f"--device {device}" in message and "no CUDA GPU" in message


def test_unknown_device_is_a_one_line_error(config_only: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_backend(f"hf:{config_only}", BackendOptions(device="gpu0"))
    message = str(caught.value)
    assert "\n" not in message
    assert "--device gpu0" in message and "cpu" in message
