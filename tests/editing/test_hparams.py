"""ROME/MEMIT hyperparameters: DyKnow's values, depth scaling, provenance, override files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.architectures import ARCHITECTURES, Architecture
from chronoprobe.lenses.editing.hparams import hparams_source, memit_hparams, rome_hparams


def arch(model_type: str, n_layers: int) -> Architecture:
    return replace(ARCHITECTURES[model_type], n_layers=n_layers)


def test_dyknow_llama2_values_by_model_id() -> None:
    llama = arch("llama", 32)
    rome = rome_hparams(llama, "meta-llama/Llama-2-7b-chat-hf")
    assert rome.layers == (5,) and rome.v_num_grad_steps == 25 and rome.v_loss_layer == 31
    assert rome.v_weight_decay == 1e-3 and rome.clamp_norm_factor == 4 and rome.kl_factor == 0.0625
    assert rome.mom2_adjustment is False
    assert rome.context_template_length_params == ((5, 10), (10, 10))
    assert rome.source == "DyKnow llama2-7b YAML"
    memit = memit_hparams(arch("mistral", 32), "mistralai/Mistral-7B-Instruct-v0.2")
    assert memit.layers == (4, 5, 6, 7, 8) and memit.mom2_update_weight == 15000
    assert memit.source == "DyKnow mistral-7b YAML"


def test_dyknow_gpt_values() -> None:
    gpt2 = memit_hparams(arch("gpt2", 48), "gpt2-xl")
    assert gpt2.layers == (13, 14, 15, 16, 17) and gpt2.clamp_norm_factor == 0.75
    assert gpt2.mom2_update_weight == 20000 and gpt2.v_num_grad_steps == 20 and gpt2.v_loss_layer == 47
    gptj = rome_hparams(arch("gptj", 28), "EleutherAI/gpt-j-6B")
    assert gptj.layers == (5,) and gptj.v_weight_decay == 0.5 and gptj.v_loss_layer == 27


def test_other_models_scale_layers_by_depth() -> None:
    smol = arch("llama", 30)
    assert hparams_source(smol, "HuggingFaceTB/SmolLM2-135M-Instruct") == (
        "llama family (DyKnow llama2-7b values), layers scaled 32->30"
    )
    assert rome_hparams(smol, "smol").layers == (5,)
    memit = memit_hparams(smol, "smol")
    assert memit.layers == (4, 5, 6, 7, 8) and memit.v_loss_layer == 29
    # a 32-layer model that is not Llama-2-7B: family values, no rename
    assert rome_hparams(arch("qwen2", 24), "Qwen/Qwen2.5-0.5B").layers == (4,)
    # depth 2: every scaled layer collapses onto one
    assert memit_hparams(arch("gpt2", 2), "tiny").layers == (1,)
    # a Llama-2-7b id on a model of another depth is treated as the family, not the YAML
    assert "scaled" in rome_hparams(arch("llama", 16), "llama-2-7b-pruned").source


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_override_file_applies_and_is_recorded(tmp_path: Path) -> None:
    path = write(tmp_path, "rome.yaml", "v_num_grad_steps: 3\nlayers: [2]\ncontext_template_length_params: [[5, 5]]\n")
    hp = rome_hparams(arch("llama", 30), "smol", path)
    assert hp.v_num_grad_steps == 3 and hp.layers == (2,) and hp.context_template_length_params == ((5, 5),)
    assert f"overrides from {path}: v_num_grad_steps, layers, context_template_length_params" in hp.source
    json_path = write(tmp_path, "memit.json", '{"mom2_update_weight": 100}')
    assert memit_hparams(arch("llama", 30), "smol", json_path).mom2_update_weight == 100


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("bad.yaml", "v_lr: 0.1\nrewrite_module_tmp: x\n", "unknown key 'rewrite_module_tmp'; allowed: layers,"),
        ("bad.yaml", "layers: [1, 2\n", "not valid YAML"),
        ("bad.json", "{", "not valid JSON"),
        ("bad.yaml", "- 1\n- 2\n", "expected a mapping"),
        ("bad.yaml", "v_num_grad_steps: many\n", "v_num_grad_steps:"),
        ("bad.yaml", "layers: [40]\n", "layers [40] outside the model's 0..29"),
        ("bad.yaml", "fact_token: subject_first\n", "fact_token:"),
    ],
)
def test_bad_override_files_are_one_line_errors(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as caught:
        rome_hparams(arch("llama", 30), "smol", path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and expected in message
    assert "\n" not in message


def test_missing_override_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the hyperparameter file"):
        memit_hparams(arch("llama", 30), "smol", tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("v_lr: fast\n", "v_lr"),
        ("layers: [a]\n", "layers.0"),
        ("layers: []\n", "layers"),
        ("v_num_grad_steps: 0\n", "v_num_grad_steps"),
        ("mom2_adjustment: perhaps\n", "mom2_adjustment"),
        ("context_template_length_params: 5\n", "context_template_length_params"),
        ("fact_token: subject_first\n", "fact_token"),
    ],
)
def test_a_wrongly_typed_override_is_refused_when_the_file_is_read(tmp_path: Path, text: str, named: str) -> None:
    from chronoprobe.lenses.editing.hparams import load_overrides

    path = tmp_path / "hparams.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:  # no model needed: before any loads
        load_overrides(path)
    assert str(caught.value).startswith(f"{path}: {named}")


def test_well_typed_overrides_pass_and_layers_are_checked_against_the_model_later(tmp_path: Path) -> None:
    from chronoprobe.lenses.editing.hparams import load_overrides

    path = tmp_path / "hparams.yaml"
    path.write_text("layers: [40]\nv_lr: 0.1\nmom2_update_weight: 100\n")
    assert load_overrides(path) == {"layers": [40], "v_lr": 0.1, "mom2_update_weight": 100}
