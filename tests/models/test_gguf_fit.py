"""gguf: refuses, before converting, a GGUF whose dequantised weights would not fit, and names llamacpp:."""

from __future__ import annotations

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.models import gguf_header, placement
from chronoprobe.models.embedded import smollm2_gguf
from chronoprobe.models.registry import load_backend


def test_gguf_that_would_not_fit_dequantised_points_to_llamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    path = smollm2_gguf()
    monkeypatch.setattr(placement, "available_ram", lambda: 100 * 2**20)  # 100 MiB free
    with pytest.raises(ConfigError) as caught:
        load_backend(f"gguf:{path}")
    message = str(caught.value)
    assert "\n" not in message and "does not fit in memory once dequantised" in message
    assert f"llamacpp:{path}" in message


def test_parameters_are_read_from_the_tensor_table() -> None:
    parameters = gguf_header.gguf_parameters(smollm2_gguf())
    assert parameters is not None and 130e6 < parameters < 140e6  # SmolLM2-135M
