"""ROME and MEMIT keep the torch path: a llamacpp: model is refused before loading, naming gguf:."""

from __future__ import annotations

import pytest

from chronoprobe.errors import CapabilityError
from chronoprobe.lenses.editing.run import check_spec
from chronoprobe.models.registry import parse_model_spec


def test_weight_edits_on_llamacpp_point_to_the_gguf_path() -> None:
    with pytest.raises(CapabilityError) as caught:
        check_spec(parse_model_spec("llamacpp:/models/x.Q4_K_M.gguf"), ["rome", "ike"])
    message = str(caught.value)
    assert "\n" not in message and "rome edit weights, which the llamacpp backend" in message
    assert "gguf:<file>" in message


def test_prompt_methods_run_on_llamacpp() -> None:
    check_spec(parse_model_spec("llamacpp:/models/x.Q4_K_M.gguf"), ["ike", "rag-gold"])
