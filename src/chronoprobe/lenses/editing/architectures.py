"""Where ROME and MEMIT find their modules in each supported transformer family.

One row per ``model.config.model_type``. Module paths hold ``{}`` for the layer index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import nn

from chronoprobe.errors import ConfigError

Family = Literal["gpt2", "gptj", "llama"]


@dataclass(frozen=True)
class Architecture:
    """Module paths of one family, plus the depth read from the model's config."""

    model_type: str
    family: Family
    layer: str
    """One transformer block (its output is the residual stream MEMIT targets)."""
    mlp: str
    rewrite: str
    """The MLP down-projection: the matrix both editors change."""
    final_norm: str
    lm_head: str
    n_layers_attr: str
    conv1d: bool
    """True when the rewrite module stores its weight as [in, out] (GPT-2's Conv1D)."""
    max_positions_attr: str
    n_layers: int = 0

    def layer_name(self, index: int) -> str:
        return self.layer.format(index)

    def mlp_name(self, index: int) -> str:
        return self.mlp.format(index)

    def rewrite_name(self, index: int) -> str:
        return self.rewrite.format(index)


def _llama_like(model_type: str) -> Architecture:
    return Architecture(
        model_type=model_type,
        family="llama",
        layer="model.layers.{}",
        mlp="model.layers.{}.mlp",
        rewrite="model.layers.{}.mlp.down_proj",
        final_norm="model.norm",
        lm_head="lm_head",
        n_layers_attr="num_hidden_layers",
        conv1d=False,
        max_positions_attr="max_position_embeddings",
    )


ARCHITECTURES: dict[str, Architecture] = {
    # GPT-2's lm_head is tied to transformer.wte (EasyEdit names the latter; same matrix).
    "gpt2": Architecture(
        model_type="gpt2",
        family="gpt2",
        layer="transformer.h.{}",
        mlp="transformer.h.{}.mlp",
        rewrite="transformer.h.{}.mlp.c_proj",
        final_norm="transformer.ln_f",
        lm_head="lm_head",
        n_layers_attr="n_layer",
        conv1d=True,
        max_positions_attr="n_positions",
    ),
    "gptj": Architecture(
        model_type="gptj",
        family="gptj",
        layer="transformer.h.{}",
        mlp="transformer.h.{}.mlp",
        rewrite="transformer.h.{}.mlp.fc_out",
        final_norm="transformer.ln_f",
        lm_head="lm_head",
        n_layers_attr="n_layer",
        conv1d=False,
        max_positions_attr="n_positions",
    ),
    **{name: _llama_like(name) for name in ("llama", "mistral", "qwen2", "qwen3")},
}


def model_name(model: nn.Module) -> str:
    config = getattr(model, "config", None)
    return str(getattr(config, "name_or_path", "") or type(model).__name__)


def detect(model: nn.Module, model_id: str | None = None) -> Architecture:
    """The module layout of ``model``; a one-line ConfigError for families ROME/MEMIT do not support."""
    config = getattr(model, "config", None)
    model_type = str(getattr(config, "model_type", "") or "unknown")
    where = f"model {model_id or model_name(model)}"
    base = ARCHITECTURES.get(model_type)
    if base is None:
        supported = ", ".join(sorted(ARCHITECTURES))
        raise ConfigError(where, f"{model_type} is not supported by ROME/MEMIT; supported: {supported}")
    n_layers = int(getattr(config, base.n_layers_attr))
    return replace(base, n_layers=n_layers)


def max_positions(model: nn.Module, arch: Architecture) -> int:
    value = getattr(getattr(model, "config", None), arch.max_positions_attr, None)
    return int(value) if value else 1024


def get_module(model: nn.Module, name: str) -> nn.Module:
    """The submodule at a dotted path (a clear error if the layout is not the expected one)."""
    try:
        return model.get_submodule(name)
    except AttributeError as exc:
        raise ConfigError(f"model {model_name(model)}", f"has no module {name}") from exc


def rewrite_weight(module: nn.Module) -> torch.Tensor:
    weight = module.weight
    assert isinstance(weight, torch.Tensor)
    return weight


def add_to_weight(module: nn.Module, delta_out_in: torch.Tensor, *, conv1d: bool) -> None:
    """Add ``delta`` given as [out, in] (a Linear's layout) to the module's weight, in place."""
    weight = rewrite_weight(module)
    delta = delta_out_in.T if conv1d else delta_out_in
    if delta.shape != weight.shape:
        raise ValueError(f"update of shape {tuple(delta.shape)} does not fit weight {tuple(weight.shape)}")
    with torch.no_grad():
        weight.add_(delta.to(device=weight.device, dtype=weight.dtype))
