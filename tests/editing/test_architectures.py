"""Module layouts for ROME/MEMIT: the real SmolLM2 (llama), a tiny untrained GPT-2, and an unsupported family."""

from __future__ import annotations

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.architectures import add_to_weight, detect, get_module


def tiny_gpt2(vocab_size: int = 256) -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=vocab_size, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config).eval()


def test_tiny_gpt2_uses_conv1d_layout() -> None:
    model = tiny_gpt2()
    arch = detect(model)
    assert (arch.family, arch.n_layers, arch.conv1d) == ("gpt2", 2, True)
    rewrite = get_module(model, arch.rewrite_name(1))
    weight = rewrite.get_parameter("weight")
    assert tuple(weight.shape) == (4 * 32, 32)  # Conv1D keeps [in, out]
    for name in (arch.layer_name(1), arch.mlp_name(1), arch.final_norm, arch.lm_head):
        get_module(model, name)
    before = weight.detach().clone()
    delta = torch.zeros(32, 4 * 32)  # given as [out, in]
    delta[3, 7] = 1.0
    add_to_weight(rewrite, delta, conv1d=True)
    assert float(weight.detach()[7, 3] - before[7, 3]) == 1.0


def test_unsupported_family_is_one_line_config_error() -> None:
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(
        vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, head_dim=8,
    )  # fmt: skip
    model = Gemma3ForCausalLM(config)
    with pytest.raises(ConfigError) as caught:
        detect(model, "google/gemma-3-tiny")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("model google/gemma-3-tiny: gemma3_text is not supported by ROME/MEMIT; supported:")
    assert "llama" in message and "gpt2" in message


@pytest.mark.slow
def test_smollm2_is_llama_layout(smollm2) -> None:  # type: ignore[no-untyped-def]
    arch = detect(smollm2.model, smollm2.info.model_id)
    assert (arch.model_type, arch.family, arch.n_layers, arch.conv1d) == ("llama", "llama", 30, False)
    down = get_module(smollm2.model, arch.rewrite_name(5))
    assert isinstance(down, torch.nn.Linear)
    assert tuple(down.weight.shape) == (576, 1536)  # [out, in]
    assert arch.final_norm == "model.norm" and arch.lm_head == "lm_head"
